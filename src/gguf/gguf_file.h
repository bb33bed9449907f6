#pragma once
// A validated, memory-mapped GGUF file (versions 2 and 3, little-endian).
//
// Everything is checked before anything is used: magic, version, counts, string and array lengths,
// value types, nesting depth, general.alignment, tensor names (unique, ggml's 63-byte limit), shapes
// (1-4 dims, no overflow, rows whole blocks), types, offsets (aligned, inside the file) and sizes,
// and that no two tensors overlap. A malformed file throws vellum::Error naming what is wrong and
// the byte offset where it was found; it never crashes.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor_type.h"
#include "gguf/metadata.h"

namespace vellum::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;
constexpr size_t kMaxTensorName = 63;     // GGML_MAX_NAME - 1
constexpr size_t kMaxArrayNesting = 8;    // deeper is no real file, and would only cost stack

struct TensorInfo {
  std::string name;
  TensorType type = TensorType::F32;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the innermost (contiguous) dimension
  uint64_t offset = 0;          // from the start of the data section
  uint64_t bytes = 0;

  uint64_t elements() const;
  std::string shape_string() const;  // "[64, 512]"
};

class GgufFile {
 public:
  // Maps and validates `path`.
  static GgufFile open(const std::string& path);
  // Validates bytes owned by the caller (which must outlive the result); `source` names them in errors.
  static GgufFile parse(std::span<const uint8_t> bytes, const std::string& source);

  uint32_t version() const { return version_; }
  const Metadata& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes inside the mapping (validated to lie inside the file).
  std::span<const uint8_t> tensor_data(const TensorInfo& tensor) const;

  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return bytes_.size(); }
  const std::string& source() const { return source_; }
  // general.architecture, or "" when absent.
  std::string architecture() const;

 private:
  GgufFile() = default;

  std::shared_ptr<MappedFile> mapping_;  // null when parsing caller-owned bytes
  std::span<const uint8_t> bytes_;
  std::string source_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;

  friend class Parser;
};

}  // namespace vellum::gguf
