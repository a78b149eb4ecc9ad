// Boost.Asio's TLS layer compiled once (see proxy/asio.cpp).
#include <boost/asio/ssl/impl/src.hpp>
