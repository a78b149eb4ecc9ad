#pragma once
// Overwrites memory that held a secret with zeros, in a way the compiler may
// not remove as a dead store (explicit_bzero).
#include <cstddef>
#include <string>

namespace px {

void secure_wipe(void* data, std::size_t size);
// The string's bytes (its size, not its capacity).
void secure_wipe(std::string& text);

}  // namespace px
