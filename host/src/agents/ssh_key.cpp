#include "agents/ssh_key.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/base64.hpp"
#include "common/sha256.hpp"

namespace px::agents {

namespace {

using Bytes = std::vector<unsigned char>;

// Wipes what it held when it goes (the private section holds the seed).
struct SecretBytes {
  Bytes data;
  ~SecretBytes() { OPENSSL_cleanse(data.data(), data.size()); }
};

void put_u32(Bytes& out, std::uint32_t v) {
  out.push_back(static_cast<unsigned char>(v >> 24));
  out.push_back(static_cast<unsigned char>(v >> 16));
  out.push_back(static_cast<unsigned char>(v >> 8));
  out.push_back(static_cast<unsigned char>(v));
}

void put_string(Bytes& out, const unsigned char* data, std::size_t size) {
  put_u32(out, static_cast<std::uint32_t>(size));
  out.insert(out.end(), data, data + size);
}

void put_string(Bytes& out, const std::string& s) {
  put_string(out, reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

std::string base64(const unsigned char* data, std::size_t size) {
  return base64_encode(std::string_view(reinterpret_cast<const char*>(data), size));
}

Result<Bytes> unbase64(const std::string& text) {
  const auto decoded = base64_decode(text);
  if (!decoded || decoded->empty()) return Error::invalid("not base64");
  return Bytes(decoded->begin(), decoded->end());
}

const std::string key_type = "ssh-ed25519";

Bytes public_blob(const unsigned char* pub, std::size_t size) {
  Bytes blob;
  put_string(blob, key_type);
  put_string(blob, pub, size);
  return blob;
}

std::string fingerprint_of_blob(const Bytes& blob) {
  const auto digest = sha256(std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
  std::string b64 = base64(digest.data(), digest.size());
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "SHA256:" + b64;
}

}  // namespace

Result<SshKeyPair> generate_ed25519(const std::string& comment) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr), &EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) <= 0 || EVP_PKEY_keygen(ctx.get(), &raw) <= 0)
    return Error::internal("OpenSSL could not generate an ed25519 key; check the OpenSSL installation.");
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, &EVP_PKEY_free);

  unsigned char pub[32];
  std::size_t pub_len = sizeof pub;
  SecretBytes seed;
  seed.data.resize(32);
  std::size_t seed_len = seed.data.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), pub, &pub_len) <= 0 || pub_len != 32 ||
      EVP_PKEY_get_raw_private_key(key.get(), seed.data.data(), &seed_len) <= 0 || seed_len != 32)
    return Error::internal("OpenSSL did not give the raw ed25519 key bytes.");

  const Bytes blob = public_blob(pub, pub_len);

  // openssh-key-v1, unencrypted (PROTOCOL.key in OpenSSH's sources).
  SecretBytes priv;
  std::uint32_t check = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&check), sizeof check) != 1)
    return Error::internal("OpenSSL's random generator failed.");
  put_u32(priv.data, check);
  put_u32(priv.data, check);
  put_string(priv.data, key_type);
  put_string(priv.data, pub, pub_len);
  SecretBytes secret64;  // OpenSSH keeps seed || public key
  secret64.data = seed.data;
  secret64.data.insert(secret64.data.end(), pub, pub + pub_len);
  put_string(priv.data, secret64.data.data(), secret64.data.size());
  put_string(priv.data, comment);
  for (unsigned char pad = 1; priv.data.size() % 8 != 0; ++pad) priv.data.push_back(pad);

  SecretBytes file;
  const std::string magic = "openssh-key-v1";
  file.data.insert(file.data.end(), magic.begin(), magic.end());
  file.data.push_back('\0');
  put_string(file.data, std::string("none"));  // cipher
  put_string(file.data, std::string("none"));  // kdf
  put_string(file.data, std::string());        // kdf options
  put_u32(file.data, 1);
  put_string(file.data, blob.data(), blob.size());
  put_string(file.data, priv.data.data(), priv.data.size());

  SshKeyPair out;
  std::string b64 = base64(file.data.data(), file.data.size());
  out.private_key = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (std::size_t i = 0; i < b64.size(); i += 70) out.private_key += b64.substr(i, 70) + "\n";
  out.private_key += "-----END OPENSSH PRIVATE KEY-----\n";
  OPENSSL_cleanse(b64.data(), b64.size());
  out.public_key =
      key_type + " " + base64(blob.data(), blob.size()) + (comment.empty() ? "" : " " + comment) + "\n";
  out.fingerprint = fingerprint_of_blob(blob);
  return out;
}

Result<std::string> ssh_fingerprint(const std::string& line) {
  const auto sp = line.find(' ');
  if (sp == std::string::npos || line.substr(0, sp) != key_type)
    return Error::invalid("not an ssh-ed25519 public key line");
  auto end = line.find_first_of(" \n", sp + 1);
  auto blob = unbase64(line.substr(sp + 1, end == std::string::npos ? std::string::npos : end - sp - 1));
  if (!blob) return Error::invalid("the public key's base64 is damaged");
  return fingerprint_of_blob(blob.value());
}

}  // namespace px::agents
