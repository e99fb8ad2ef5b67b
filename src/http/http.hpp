#pragma once
// cpp-httplib as Debian builds it: a shared library compiled with OpenSSL, zlib
// and brotli support. The class layout depends on these macros, so every file
// that includes httplib.h must see the same ones; pkg-config passes them too.
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#ifndef CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#endif
#ifndef CPPHTTPLIB_BROTLI_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#endif
#include <httplib.h>
