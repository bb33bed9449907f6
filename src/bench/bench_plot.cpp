#include "bench/bench_plot.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "core/error.h"

namespace vellum::bench {
namespace {

size_t column(const Table& t, const std::string& name) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == name) return i;
  throw_error("plot: the results have no column '{}'", name);
}

double number(const Cell& c) {
  if (auto d = std::get_if<double>(&c)) return *d;
  if (auto i = std::get_if<int64_t>(&c)) return static_cast<double>(*i);
  throw_error("plot: a non-numeric cell");
}

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string gnuplot_script(const Table& t, const std::string& svg_path, const std::string& title) {
  const size_t cb = column(t, "batch"), cp = column(t, "prompt"), cn = column(t, "generate"),
               cpre = column(t, "prefill_tok_s"), cdec = column(t, "decode_tok_s");
  // One series per (prompt, generate); points ordered by batch.
  std::map<std::pair<int64_t, int64_t>, std::map<double, std::pair<double, double>>> series;
  for (const auto& r : t.rows)
    series[{int64_t(number(r[cp])), int64_t(number(r[cn]))}][number(r[cb])] = {number(r[cpre]), number(r[cdec])};
  std::string s = fmt::format(
      "set terminal svg size 1000,420 dynamic background rgb 'white'\nset output {}\n"
      "set multiplot layout 1,2 title {}\nset logscale x 2\nset xlabel 'concurrent sequences (-b)'\n"
      "set ylabel 'tok/s'\nset key top left\nset grid\n",
      gp_quote(svg_path), gp_quote(title));
  for (int which = 0; which < 2; ++which) {
    s += fmt::format("set title '{}'\nplot ", which == 0 ? "decode tok/s (output throughput)" : "prefill tok/s");
    size_t k = 0;
    for (const auto& [key, pts] : series)
      s += fmt::format("{}'-' using 1:2 with linespoints title 'p={} n={}'", k++ ? ", " : "", key.first, key.second);
    s += "\n";
    for (const auto& [key, pts] : series) {
      for (const auto& [b, v] : pts) s += fmt::format("{} {}\n", b, which == 0 ? v.second : v.first);
      s += "e\n";
    }
  }
  return s + "unset multiplot\n";
}

void plot_svg(const Table& t, const std::string& svg_path, const std::string& title) {
  const std::string script = gnuplot_script(t, svg_path, title);
  std::FILE* p = popen("gnuplot", "w");
  if (!p) throw_error("--plot: cannot start gnuplot (install the Debian package gnuplot-nox)");
  std::fwrite(script.data(), 1, script.size(), p);
  const int rc = pclose(p);
  if (rc != 0) throw_error("--plot: gnuplot failed (exit status {}); is gnuplot-nox installed?", rc);
}

}  // namespace vellum::bench
