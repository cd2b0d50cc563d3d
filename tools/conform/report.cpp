#include "tools/conform/report.hpp"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <sstream>

namespace tg::conform {

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
  case Outcome::pass:
    return "PASS";
  case Outcome::fail:
    return "FAIL";
  case Outcome::skip:
    return "SKIP";
  case Outcome::unavailable:
    return "UNAVAILABLE";
  case Outcome::crash:
    return "CRASH";
  }
  return "?";
}

size_t RunReport::count(Outcome outcome) const {
  size_t n = 0;
  for (const auto& c : cases) n += c.result.outcome == outcome ? 1 : 0;
  return n;
}

std::string case_line(const CaseReport& c) {
  std::string message = c.result.message;
  for (char& ch : message)
    if (ch == '\n') ch = ' ';
  std::string line = std::string(outcome_name(c.result.outcome)) + " " + c.name;
  if (message.empty()) return line;
  if (c.result.outcome == Outcome::crash) return line + " " + message; // "(signal 11)"
  return line + ": " + message;
}

std::string summary_line(const RunReport& r) {
  std::string s = "tg conform " + r.plugin + ": " + std::to_string(r.cases.size()) +
                  " cases: " + std::to_string(r.count(Outcome::pass)) + " passed, " +
                  std::to_string(r.count(Outcome::fail)) + " failed, " +
                  std::to_string(r.count(Outcome::skip)) + " skipped, " +
                  std::to_string(r.count(Outcome::unavailable)) + " unavailable, " +
                  std::to_string(r.count(Outcome::crash)) + " crashed";
  if (!r.unavailable_reason.empty()) s += " (no hardware: " + r.unavailable_reason + ")";
  return s;
}

void write_json(const RunReport& r, std::ostream& out) {
  nlohmann::json j;
  j["plugin"] = r.plugin;
  j["path"] = r.plugin_path;
  j["plugin_name"] = r.plugin_name;
  j["device"] = r.device;
  j["device_name"] = r.device_name;
  if (!r.unavailable_reason.empty()) j["unavailable"] = r.unavailable_reason;
  j["cases"] = nlohmann::json::array();
  for (const auto& c : r.cases) {
    std::string result = outcome_name(c.result.outcome);
    for (char& ch : result) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    j["cases"].push_back(
        {{"name", c.name}, {"result", result}, {"message", c.result.message}, {"seconds", c.seconds}});
  }
  j["summary"] = {{"cases", r.cases.size()},
                  {"passed", r.count(Outcome::pass)},
                  {"failed", r.count(Outcome::fail)},
                  {"skipped", r.count(Outcome::skip)},
                  {"unavailable", r.count(Outcome::unavailable)},
                  {"crashed", r.count(Outcome::crash)}};
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

namespace {
std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\n':
      out += "&#10;";
      break;
    default:
      if (c < 0x20 && c != '\t')
        out += ' '; // not allowed in XML 1.0
      else
        out += char(c);
    }
  }
  return out;
}
} // namespace

void write_junit(const RunReport& r, std::ostream& out) {
  double total = 0;
  for (const auto& c : r.cases) total += c.seconds;
  const std::string suite = "tg conform " + r.plugin;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"" << xml_escape(suite) << "\" tests=\"" << r.cases.size() << "\" failures=\""
      << r.count(Outcome::fail) << "\" errors=\"" << r.count(Outcome::crash) << "\" skipped=\""
      << r.count(Outcome::skip) + r.count(Outcome::unavailable) << "\" time=\"" << std::fixed
      << std::setprecision(3) << total << "\">\n";
  out << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << r.cases.size() << "\" failures=\""
      << r.count(Outcome::fail) << "\" errors=\"" << r.count(Outcome::crash) << "\" skipped=\""
      << r.count(Outcome::skip) + r.count(Outcome::unavailable) << "\" time=\"" << total << "\">\n";
  for (const auto& c : r.cases) {
    auto slash = c.name.rfind('/');
    std::string group = slash == std::string::npos ? "" : c.name.substr(0, slash);
    std::string name = slash == std::string::npos ? c.name : c.name.substr(slash + 1);
    for (char& ch : group)
      if (ch == '/') ch = '.';
    out << "    <testcase classname=\"conform." << xml_escape(group) << "\" name=\"" << xml_escape(name)
        << "\" time=\"" << c.seconds << "\"";
    const std::string message = xml_escape(c.result.message);
    switch (c.result.outcome) {
    case Outcome::pass:
      out << "/>\n";
      continue;
    case Outcome::fail:
      out << ">\n      <failure message=\"" << message << "\"/>\n";
      break;
    case Outcome::crash:
      out << ">\n      <error message=\"crash " << message << "\"/>\n";
      break;
    case Outcome::skip:
      out << ">\n      <skipped message=\"" << message << "\"/>\n";
      break;
    case Outcome::unavailable:
      out << ">\n      <skipped message=\"unavailable: " << message << "\"/>\n";
      break;
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

} // namespace tg::conform
