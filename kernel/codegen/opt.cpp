#include "kernel/codegen/opt.hpp"

#include <array>
#include <cctype>
#include <cstdlib>

namespace tg {

namespace {
constexpr std::array kNames{"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "LOOP", "PADTO", "TC", "STAGE"};
}

const char* opt_name(OptOp op) { return kNames.at(size_t(op)); }

std::string to_string(const Opt& o) {
  return std::string(opt_name(o.op)) + "(" + std::to_string(o.axis) + "," + std::to_string(o.amount) + ")";
}

std::string to_string(const std::vector<Opt>& opts) {
  std::string s = "[";
  for (size_t i = 0; i < opts.size(); ++i) s += (i ? ", " : "") + to_string(opts[i]);
  return s + "]";
}

std::vector<Opt> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    throw OptError("parse_opts: " + why + " at offset " + std::to_string(i) + " in \"" + text + "\"");
  };
  auto skip = [&] {
    while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == ',')) ++i;
  };
  auto number = [&] {
    size_t start = i;
    if (i < text.size() && text[i] == '-') ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (start == i) fail("expected a number");
    return std::strtoll(text.c_str() + start, nullptr, 10);
  };
  skip();
  if (i < text.size() && text[i] == '[') ++i;
  for (skip(); i < text.size() && text[i] != ']'; skip()) {
    size_t start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string name = text.substr(start, i - start);
    size_t k = 0;
    while (k < kNames.size() && name != kNames[k]) ++k;
    if (k == kNames.size()) fail("unknown optimization \"" + name + "\"");
    if (i >= text.size() || text[i++] != '(') fail("expected '('");
    Opt o{OptOp(k)};
    o.axis = int(number());
    if (i >= text.size() || text[i++] != ',') fail("expected ','");
    o.amount = number();
    if (i >= text.size() || text[i++] != ')') fail("expected ')'");
    out.push_back(o);
  }
  return out;
}

} // namespace tg
