// What every example does with what it teaches: states a claim, checks it, prints "ok" or "FAIL"
// with the values, and at the end exits non-zero if any claim failed (ctest runs the examples).
#pragma once

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace examples {

class Claims {
public:
  // Prints "  ok   what" or "  FAIL what (detail)"; returns ok.
  bool check(bool ok, const std::string& what, const std::string& detail = "") {
    std::cout << (ok ? "  ok   " : "  FAIL ") << what;
    if (!detail.empty()) std::cout << "  [" << detail << "]";
    std::cout << "\n";
    if (!ok) failed_.push_back(what);
    return ok;
  }
  template <class A, class B> bool equal(const A& got, const B& want, const std::string& what) {
    std::ostringstream d;
    d << "got " << got << ", want " << want;
    return check(got == want, what, d.str());
  }
  // |got - want| <= atol + rtol * |want| for every element.
  bool close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
             const std::string& what) {
    if (got.size() != want.size())
      return check(false, what, "sizes " + std::to_string(got.size()) + " vs " + std::to_string(want.size()));
    double worst = 0;
    size_t at = 0;
    bool ok = true;
    for (size_t i = 0; i < got.size(); ++i) {
      double err = std::abs(got[i] - want[i]), bound = atol + rtol * std::abs(want[i]);
      if (!(err <= bound)) ok = false; // NaN fails
      if (!(err <= worst)) worst = err, at = i;
    }
    std::ostringstream d;
    d << "max error " << worst << " at " << at << " (" << got[at] << " vs " << want[at] << ")";
    return check(ok, what, d.str());
  }
  // The exit status: 0 when every claim held.
  int finish(const std::string& program) const {
    if (failed_.empty()) {
      std::cout << program << ": every claim held\n";
      return 0;
    }
    std::cout << program << ": " << failed_.size() << " claim(s) failed:\n";
    for (const auto& f : failed_) std::cout << "  " << f << "\n";
    return 1;
  }

private:
  std::vector<std::string> failed_;
};

// Converts to double for comparisons.
template <class T> std::vector<double> doubles(const std::vector<T>& v) { return {v.begin(), v.end()}; }

inline void section(const std::string& title) { std::cout << "\n== " << title << "\n"; }

// Each line of `text` with `spaces` in front (for printing multi-line output inside a section).
inline std::string indent(const std::string& text, size_t spaces) {
  std::string out, pad(spaces, ' ');
  bool at_start = true;
  for (char c : text) {
    if (at_start && c != '\n') out += pad;
    out += c;
    at_start = c == '\n';
  }
  return out;
}

} // namespace examples
