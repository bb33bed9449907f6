#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "core/error.h"
#include "gguf/gguf_file.h"

namespace vellum::gguf {
namespace {

class FileOut {
 public:
  explicit FileOut(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (f_ == nullptr) throw_error("{}: cannot create: {}", path, std::strerror(errno));
  }
  ~FileOut() {
    if (f_ != nullptr) std::fclose(f_);
  }
  void bytes(const void* p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f_) != n) throw_error("{}: write failed: {}", path_, std::strerror(errno));
    pos_ += n;
  }
  template <typename T>
  void raw(T v) { bytes(&v, sizeof v); }
  void string(const std::string& s) {
    raw<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const char zeros[256] = {};
    while (pos_ % alignment != 0) bytes(zeros, std::min<uint64_t>(alignment - pos_ % alignment, sizeof zeros));
  }
  void close() {
    FILE* f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) throw_error("{}: close failed: {}", path_, std::strerror(errno));
  }
  uint64_t pos() const { return pos_; }

 private:
  std::string path_;
  FILE* f_;
  uint64_t pos_ = 0;
};

void write_value(FileOut& out, const Value& v) {
  switch (v.type()) {
    case ValueType::U8: out.raw(v.as_u8()); break;
    case ValueType::I8: out.raw(v.as_i8()); break;
    case ValueType::U16: out.raw(v.as_u16()); break;
    case ValueType::I16: out.raw(v.as_i16()); break;
    case ValueType::U32: out.raw(v.as_u32()); break;
    case ValueType::I32: out.raw(v.as_i32()); break;
    case ValueType::U64: out.raw(v.as_u64()); break;
    case ValueType::I64: out.raw(v.as_i64()); break;
    case ValueType::F32: out.raw(v.as_f32()); break;
    case ValueType::F64: out.raw(v.as_f64()); break;
    case ValueType::BOOL: out.raw<uint8_t>(v.as_bool() ? 1 : 0); break;
    case ValueType::STRING: out.string(v.as_string()); break;
    case ValueType::ARRAY:
      out.raw(static_cast<uint32_t>(v.array_type()));
      out.raw<uint64_t>(v.as_array().size());
      for (const auto& item : v.as_array()) write_value(out, item);
      break;
  }
}

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw_error("GGUF alignment {} is not a power of two", alignment);
  if (alignment != kDefaultAlignment) metadata_.set("general.alignment", Value::u32(alignment));
}

void GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> shape, Fill fill) {
  if (name.empty() || name.size() > kMaxTensorName) throw_error("tensor name '{}' must be 1 to {} bytes", name, kMaxTensorName);
  if (shape.empty() || shape.size() > kMaxDims) throw_error("tensor {}: {} dimensions (expected 1 to {})", name, shape.size(), kMaxDims);
  for (const auto& t : tensors_) {
    if (t.name == name) throw_error("tensor {} added twice", name);
  }
  const auto& tr = traits(type);
  if (shape[0] % tr.block_elements != 0) {
    throw_error("tensor {}: row length {} is not a multiple of the {} block size {}", name, shape[0], tr.name, tr.block_elements);
  }
  uint64_t elements = 1;
  for (uint64_t d : shape) {
    if (d == 0) throw_error("tensor {}: zero dimension", name);
    elements *= d;
  }
  tensors_.push_back({name, type, std::move(shape), elements / tr.block_elements * tr.block_bytes, std::move(fill)});
}

void GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> shape,
                            std::vector<uint8_t> bytes) {
  auto data = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  add_tensor(name, type, std::move(shape), [data, name](std::span<uint8_t> out) {
    if (out.size() != data->size()) throw_error("tensor {}: {} bytes given, {} expected", name, data->size(), out.size());
    std::memcpy(out.data(), data->data(), out.size());
  });
  if (tensors_.back().bytes != data->size()) {
    const uint64_t want = tensors_.back().bytes;
    tensors_.pop_back();
    throw_error("tensor {}: {} bytes given, {} expected for its type and shape", name, data->size(), want);
  }
}

void GgufWriter::write(const std::string& path, const std::function<void(size_t, size_t)>& progress) const {
  const std::string tmp = path + ".tmp";
  try {
    FileOut out(tmp);
    out.raw<uint32_t>(kMagic);
    out.raw<uint32_t>(3);
    out.raw<uint64_t>(tensors_.size());
    out.raw<uint64_t>(metadata_.size());
    for (const auto& [key, value] : metadata_.entries()) {
      out.string(key);
      out.raw(static_cast<uint32_t>(value.type()));
      write_value(out, value);
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
      out.string(t.name);
      out.raw<uint32_t>(static_cast<uint32_t>(t.shape.size()));
      for (uint64_t d : t.shape) out.raw<uint64_t>(d);
      out.raw(static_cast<uint32_t>(t.type));
      out.raw<uint64_t>(offset);
      offset += (t.bytes + alignment_ - 1) / alignment_ * alignment_;
    }
    out.pad_to(alignment_);
    const uint64_t data_start = out.pos();
    std::vector<uint8_t> buffer;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const auto& t = tensors_[i];
      buffer.assign(t.bytes, 0);
      t.fill(buffer);
      out.bytes(buffer.data(), buffer.size());
      // Pad between tensors only: the data section ends with the last tensor's bytes.
      if (i + 1 < tensors_.size()) {
        while ((out.pos() - data_start) % alignment_ != 0) out.raw<uint8_t>(0);
      }
      if (progress) progress(i + 1, tensors_.size());
    }
    out.close();
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw_error("{}: cannot rename {} into place: {}", path, tmp, std::strerror(err));
  }
}

}  // namespace vellum::gguf
