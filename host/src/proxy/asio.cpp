// Boost.Asio's compiled part, once for the whole program: everything that
// links px_proxy gets BOOST_ASIO_SEPARATE_COMPILATION (proxy/CMakeLists.txt),
// so the files that use Asio declare its scheduler, reactor and sockets
// instead of each compiling them again.
#include <boost/asio/impl/src.hpp>
