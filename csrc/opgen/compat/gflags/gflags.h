// opgen compat: declarations of the gflags macros Paddle and PaddleCustomDevice
// headers use (DECLARE_* / DEFINE_*), for syntax checks where gflags is not installed
// (the Paddle wheel does not ship it). Only on the include path when no system
// gflags/gflags.h exists; never linked into anything that runs.
#pragma once

#include <cstdint>
#include <string>

#define OPGEN_GFLAGS_DECLARE(type, name) extern type FLAGS_##name
#define OPGEN_GFLAGS_DEFINE(type, name, value) type FLAGS_##name = (value)

#define DECLARE_bool(name) OPGEN_GFLAGS_DECLARE(bool, name)
#define DECLARE_int32(name) OPGEN_GFLAGS_DECLARE(int32_t, name)
#define DECLARE_uint32(name) OPGEN_GFLAGS_DECLARE(uint32_t, name)
#define DECLARE_int64(name) OPGEN_GFLAGS_DECLARE(int64_t, name)
#define DECLARE_uint64(name) OPGEN_GFLAGS_DECLARE(uint64_t, name)
#define DECLARE_double(name) OPGEN_GFLAGS_DECLARE(double, name)
#define DECLARE_string(name) OPGEN_GFLAGS_DECLARE(std::string, name)
#define DEFINE_bool(name, value, help) OPGEN_GFLAGS_DEFINE(bool, name, value)
#define DEFINE_int32(name, value, help) OPGEN_GFLAGS_DEFINE(int32_t, name, value)
#define DEFINE_uint32(name, value, help) OPGEN_GFLAGS_DEFINE(uint32_t, name, value)
#define DEFINE_int64(name, value, help) OPGEN_GFLAGS_DEFINE(int64_t, name, value)
#define DEFINE_uint64(name, value, help) OPGEN_GFLAGS_DEFINE(uint64_t, name, value)
#define DEFINE_double(name, value, help) OPGEN_GFLAGS_DEFINE(double, name, value)
#define DEFINE_string(name, value, help) OPGEN_GFLAGS_DEFINE(std::string, name, value)

namespace gflags {
inline uint32_t ParseCommandLineFlags(int*, char***, bool) { return 0; }
}  // namespace gflags
namespace google = gflags;
