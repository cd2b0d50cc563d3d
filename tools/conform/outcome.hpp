// What one conformance case ends with, and the exceptions a case body throws to say so.
// A body that returns normally passed.
#pragma once

#include <stdexcept>
#include <string>

namespace tg::conform {

enum class Outcome { pass, fail, skip, unavailable, crash };

// "PASS", "FAIL", "SKIP", "UNAVAILABLE", "CRASH"
const char* outcome_name(Outcome outcome);

struct Result {
  Outcome outcome = Outcome::pass;
  std::string message; // why (empty for a plain pass)
};

// The plugin broke a rule.
class CaseFailed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The device declares it does not support what the case needs.
class CaseSkipped : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Fails the case with `message` unless `condition` holds.
inline void expect(bool condition, const std::string& message) {
  if (!condition) throw CaseFailed(message);
}

} // namespace tg::conform
