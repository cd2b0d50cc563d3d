#pragma once
// VIZ traces as JSON files (the schema is in docs/viz.md): save one, read one back. A file that is
// not a trace gets TraceFormatError naming the file and where it broke (line and column for bad
// JSON, the field's path such as realizes[0].kernels[2].name for a wrong shape).
#include <filesystem>
#include <string>
#include <string_view>

#include "kernel/ir/errors.hpp"
#include "kernel/viz/trace.hpp"

namespace tg::viz {

inline constexpr const char* kTraceFormat = "tinygrad.cpp-viz";
inline constexpr int kTraceVersion = 1;

class TraceFormatError : public Error {
public:
  using Error::Error;
};

std::string trace_to_json(const Trace& trace);
// `where` names the text's origin in error messages (a file path).
Trace trace_from_json(std::string_view text, const std::string& where = "trace");

void save_trace(const Trace& trace, const std::filesystem::path& path); // throws Error if unwritable
Trace load_trace(const std::filesystem::path& path);                    // Error if unreadable

} // namespace tg::viz
