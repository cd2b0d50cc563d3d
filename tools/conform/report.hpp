// The results of a run, as a user reads them (one line per case and a summary), as JSON and as
// JUnit XML for CI tools.
#pragma once

#include "tools/conform/outcome.hpp"

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace tg::conform {

struct CaseReport {
  std::string name;
  Result result;
  double seconds = 0;
};

struct RunReport {
  std::string plugin;      // as given on the command line
  std::string plugin_path; // the file
  std::string plugin_name; // the table's plugin_name, when it answered
  int32_t device = 0;
  std::string device_name;        // empty when no device was available
  std::string unavailable_reason; // non-empty: the plugin has no hardware here
  std::vector<CaseReport> cases;

  size_t count(Outcome outcome) const;
  bool failed() const { return count(Outcome::fail) + count(Outcome::crash) > 0; }
};

// "PASS memory/offsets", "FAIL compile/x: reason", "CRASH launch/y (signal 11)".
std::string case_line(const CaseReport& c);
// "tg conform: 83 cases: 80 passed, 0 failed, 3 skipped, 0 unavailable, 0 crashed"
std::string summary_line(const RunReport& report);

void write_json(const RunReport& report, std::ostream& out);
void write_junit(const RunReport& report, std::ostream& out);

} // namespace tg::conform
