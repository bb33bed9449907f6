#pragma once
// Draws `vellum bench` results as an SVG with gnuplot (Debian gnuplot-nox): decode and prefill tok/s
// against batch size, one line per (prompt, generate) pair. gnuplot reads the script on stdin.

#include <string>

#include "bench/table.h"

namespace vellum::bench {

// The gnuplot script (data inline) for `table`, which must have columns "batch", "prompt", "generate",
// "prefill_tok_s", "decode_tok_s". Throws vellum::Error for a missing column.
std::string gnuplot_script(const Table& table, const std::string& svg_path, const std::string& title);

// Runs gnuplot; throws vellum::Error when it is missing or fails.
void plot_svg(const Table& table, const std::string& svg_path, const std::string& title);

}  // namespace vellum::bench
