#pragma once
// VIZ's web page, rendered on the server from a trace: a sidebar of realizes and kernels; for a
// realize its tensor graph and the schedule's timeline; for a kernel its stages (schedule item,
// rewrites stepped with a slider and the changed nodes highlighted, lowered graph, kernel IR,
// source with syntax colouring). Plain links and query strings select what is shown
// (/?r=0&k=1&stage=rewrite&step=2), so the page works offline and without scripts; a little
// embedded script adds the slider and arrow keys.
#include <string>
#include <string_view>

#include "kernel/viz/trace.hpp"

namespace tg::viz {

struct Response {
  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
};

// The response for an HTTP request target ("/", "/?r=0&k=1", "/style.css", "/trace.json" ...).
Response respond(const Trace& trace, std::string_view target);

// Source or kernel IR as HTML with <span class="k|n|c|s|o"> for keywords, numbers, comments,
// strings and IR op names.
std::string highlight(std::string_view code);

} // namespace tg::viz
