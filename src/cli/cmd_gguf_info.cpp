// vellum gguf info FILE [--json] [--full]: what a GGUF file holds.

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/error.h"
#include "gguf/gguf_file.h"

namespace vellum::cli {
namespace {

struct InfoOptions {
  std::string path;
  bool json = false;
  bool full = false;
};

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.2f} {}", v, units[u]);
}

std::string human_count(uint64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1000000) return fmt::format("{:.2f} M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.2f} K", n / 1e3);
  return std::to_string(n);
}

nlohmann::json info_json(const gguf::GgufFile& f, bool full) {
  nlohmann::json j;
  j["file"] = f.source();
  j["version"] = f.version();
  j["architecture"] = f.architecture();
  j["alignment"] = f.alignment();
  j["data_offset"] = f.data_offset();
  j["file_bytes"] = f.file_size();
  nlohmann::json md = nlohmann::json::object();
  for (const auto& [key, value] : f.metadata().entries()) {
    nlohmann::json e;
    e["type"] = value.type_description();
    if (value.type() == gguf::ValueType::ARRAY) {
      e["length"] = value.as_array().size();
      if (full || value.as_array().size() <= 64) e["value"] = value.to_json();
    } else {
      e["value"] = value.to_json();
    }
    md[key] = std::move(e);
  }
  j["metadata"] = std::move(md);
  nlohmann::json tensors = nlohmann::json::array();
  uint64_t params = 0, bytes = 0;
  for (const auto& t : f.tensors()) {
    tensors.push_back({{"name", t.name}, {"type", tensor_type_name(t.type)}, {"shape", t.shape},
                       {"offset", t.offset}, {"bytes", t.bytes}});
    params += t.elements();
    bytes += t.bytes;
  }
  j["tensors"] = std::move(tensors);
  j["totals"] = {{"tensors", f.tensors().size()}, {"parameters", params}, {"tensor_bytes", bytes}};
  return j;
}

void print_table(const gguf::GgufFile& f) {
  const auto& md = f.metadata();
  std::printf("file:          %s\n", f.source().c_str());
  std::printf("format:        GGUF v%u, alignment %u, data at byte %llu, %s\n", f.version(), f.alignment(),
              static_cast<unsigned long long>(f.data_offset()), human_bytes(f.file_size()).c_str());
  const std::string arch = f.architecture();
  std::printf("architecture:  %s\n", arch.empty() ? "(none)" : arch.c_str());
  if (const auto* name = md.find("general.name"); name && name->type() == gguf::ValueType::STRING) {
    std::printf("name:          %s\n", name->as_string().c_str());
  }

  std::printf("\nmetadata (%zu keys)\n", md.size());
  size_t key_width = 3;
  for (const auto& [key, value] : md.entries()) key_width = std::max(key_width, key.size());
  for (const auto& [key, value] : md.entries()) {
    std::printf("  %-*s  %-14s %s\n", static_cast<int>(key_width), key.c_str(), value.type_description().c_str(),
                value.to_display().c_str());
  }

  std::printf("\ntensors (%zu)\n", f.tensors().size());
  size_t name_width = 4;
  for (const auto& t : f.tensors()) name_width = std::max(name_width, t.name.size());
  std::printf("  %-*s  %-7s %-24s %12s\n", static_cast<int>(name_width), "name", "type", "shape", "bytes");
  uint64_t params = 0, bytes = 0;
  std::map<std::string, std::pair<size_t, uint64_t>> per_type;
  for (const auto& t : f.tensors()) {
    std::printf("  %-*s  %-7s %-24s %12llu\n", static_cast<int>(name_width), t.name.c_str(),
                std::string(tensor_type_name(t.type)).c_str(), t.shape_string().c_str(),
                static_cast<unsigned long long>(t.bytes));
    params += t.elements();
    bytes += t.bytes;
    auto& pt = per_type[std::string(tensor_type_name(t.type))];
    pt.first += 1;
    pt.second += t.bytes;
  }
  std::printf("\ntotals:        %zu tensors, %s parameters (%llu), %s of tensor data", f.tensors().size(),
              human_count(params).c_str(), static_cast<unsigned long long>(params), human_bytes(bytes).c_str());
  if (params > 0) std::printf(", %.2f bits per weight", 8.0 * static_cast<double>(bytes) / static_cast<double>(params));
  std::printf("\n");
  for (const auto& [type, count_bytes] : per_type) {
    std::printf("  %-7s %5zu tensors  %s\n", type.c_str(), count_bytes.first, human_bytes(count_bytes.second).c_str());
  }
}

const CommandRegistration registration("gguf", [](CLI::App& parent) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = parent.add_subcommand("info", "Show a GGUF file's metadata and tensors");
  cmd->add_option("file", opts->path, "GGUF file")->required();
  cmd->add_flag("--json", opts->json, "Print JSON instead of a table");
  cmd->add_flag("--full", opts->full, "With --json: print long arrays (vocabularies) in full");
  cmd->callback([opts] {
    const auto f = gguf::GgufFile::open(opts->path);
    if (opts->json) {
      std::printf("%s\n", info_json(f, opts->full).dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      print_table(f);
    }
  });
});

}  // namespace
}  // namespace vellum::cli
