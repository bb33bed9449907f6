#include "gguf/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "core/error.h"

namespace vellum::gguf {

uint64_t TensorInfo::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Reads the header, metadata and tensor infos with a bounds-checked cursor.
class Parser {
 public:
  Parser(GgufFile& file) : f_(file), data_(file.bytes_.data()), size_(file.bytes_.size()) {}

  void run() {
    const uint32_t magic = read_u32("magic");
    if (magic != kMagic) {
      fail_at(0, "not a GGUF file (magic {:02x} {:02x} {:02x} {:02x}, expected \"GGUF\")", data_[0], data_[1],
              data_[2], data_[3]);
    }
    const size_t version_at = pos_;
    f_.version_ = read_u32("version");
    if (f_.version_ == 1) fail_at(version_at, "GGUF version 1 is not supported (only 2 and 3)");
    if (f_.version_ == 0x02000000 || f_.version_ == 0x03000000) {
      fail_at(version_at, "big-endian GGUF files are not supported");
    }
    if (f_.version_ != 2 && f_.version_ != 3) fail_at(version_at, "unsupported GGUF version {}", f_.version_);

    const size_t counts_at = pos_;
    const uint64_t n_tensors = read_u64("tensor count");
    const uint64_t n_kv = read_u64("metadata count");
    // Each metadata entry takes at least 8 (key length) + 4 (type) + 1 bytes, each tensor info 8+4+8+4+8.
    if (n_kv > remaining() / 13) fail_at(counts_at, "metadata count {} cannot fit in the file", n_kv);
    if (n_tensors > remaining() / 32) fail_at(counts_at, "tensor count {} cannot fit in the file", n_tensors);

    for (uint64_t i = 0; i < n_kv; ++i) read_kv(i);
    read_alignment();
    f_.tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) read_tensor_info(i);

    const uint64_t a = f_.alignment_;
    f_.data_offset_ = (pos_ + a - 1) / a * a;
    check_tensor_layout();
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail_at(size_t offset, fmt::format_string<Args...> format, Args&&... args) {
    throw_error("{}: at byte {}: {}", f_.source_, offset, fmt::format(format, std::forward<Args>(args)...));
  }

  size_t remaining() const { return size_ - pos_; }

  void need(size_t n, std::string_view what) {
    if (n > remaining()) {
      fail_at(pos_, "truncated while reading {} (needs {} bytes, {} left)", what, n, remaining());
    }
  }

  template <typename T>
  T read_raw(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint32_t read_u32(std::string_view what) { return read_raw<uint32_t>(what); }
  uint64_t read_u64(std::string_view what) { return read_raw<uint64_t>(what); }

  std::string read_string(std::string_view what) {
    const size_t at = pos_;
    const uint64_t len = read_u64(what);
    if (len > remaining()) fail_at(at, "{}: string length {} exceeds the file ({} bytes left)", what, len, remaining());
    std::string s(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return s;
  }

  ValueType read_type(std::string_view what) {
    const size_t at = pos_;
    const uint32_t t = read_u32(what);
    if (t >= kValueTypeCount) fail_at(at, "{}: unknown value type {}", what, t);
    return static_cast<ValueType>(t);
  }

  Value read_value(ValueType type, const std::string& what, size_t depth) {
    switch (type) {
      case ValueType::U8: return Value::u8(read_raw<uint8_t>(what));
      case ValueType::I8: return Value::i8(read_raw<int8_t>(what));
      case ValueType::U16: return Value::u16(read_raw<uint16_t>(what));
      case ValueType::I16: return Value::i16(read_raw<int16_t>(what));
      case ValueType::U32: return Value::u32(read_raw<uint32_t>(what));
      case ValueType::I32: return Value::i32(read_raw<int32_t>(what));
      case ValueType::U64: return Value::u64(read_raw<uint64_t>(what));
      case ValueType::I64: return Value::i64(read_raw<int64_t>(what));
      case ValueType::F32: return Value::f32(read_raw<float>(what));
      case ValueType::F64: return Value::f64(read_raw<double>(what));
      case ValueType::BOOL: {
        const size_t at = pos_;
        const uint8_t b = read_raw<uint8_t>(what);
        if (b > 1) fail_at(at, "{}: bool value {} is neither 0 nor 1", what, b);
        return Value::boolean(b != 0);
      }
      case ValueType::STRING: return Value::string(read_string(what));
      case ValueType::ARRAY: {
        if (depth >= kMaxArrayNesting) fail_at(pos_, "{}: arrays nested deeper than {}", what, kMaxArrayNesting);
        const ValueType elem = read_type(what + " (array element type)");
        const size_t at = pos_;
        const uint64_t n = read_u64(what + " (array length)");
        // Strings and arrays take at least 8 bytes each (their length field).
        const size_t min_item = elem == ValueType::STRING || elem == ValueType::ARRAY ? 8 : scalar_size(elem);
        if (n > remaining() / min_item) {
          fail_at(at, "{}: array length {} of {} exceeds the file ({} bytes left)", what, n, value_type_name(elem),
                  remaining());
        }
        std::vector<Value> items;
        items.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
          items.push_back(read_value(elem, elem == ValueType::ARRAY ? fmt::format("{}[{}]", what, i) : what, depth + 1));
        }
        return Value::array(elem, std::move(items));
      }
    }
    fail_at(pos_, "{}: unknown value type", what);
  }

  void read_kv(uint64_t i) {
    const size_t at = pos_;
    std::string key = read_string(fmt::format("metadata key #{}", i));
    if (key.empty()) fail_at(at, "metadata key #{} is empty", i);
    if (f_.metadata_.contains(key)) fail_at(at, "duplicate metadata key {}", key);
    const std::string what = "key " + key;
    const ValueType type = read_type(what + " (type)");
    Value v = read_value(type, what, 0);
    f_.metadata_.set(key, std::move(v));
  }

  void read_alignment() {
    const Value* v = f_.metadata_.find("general.alignment");
    if (v == nullptr) return;
    if (v->type() != ValueType::U32) {
      throw_error("{}: key general.alignment: expected u32, found {}", f_.source_, v->type_description());
    }
    const uint32_t a = v->as_u32();
    if (a == 0 || (a & (a - 1)) != 0) {
      throw_error("{}: key general.alignment: {} is not a power of two", f_.source_, a);
    }
    f_.alignment_ = a;
  }

  void read_tensor_info(uint64_t i) {
    const size_t at = pos_;
    TensorInfo t;
    t.name = read_string(fmt::format("tensor #{} name", i));
    const std::string what = fmt::format("tensor #{} ({})", i, t.name);
    if (t.name.empty()) fail_at(at, "tensor #{} has an empty name", i);
    if (t.name.size() > kMaxTensorName) {
      fail_at(at, "{}: name longer than {} bytes", what, kMaxTensorName);
    }
    if (!seen_names_.insert(t.name).second) fail_at(at, "duplicate tensor name {}", t.name);

    const size_t dims_at = pos_;
    const uint32_t n_dims = read_u32(what + " dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) fail_at(dims_at, "{}: {} dimensions (expected 1 to {})", what, n_dims, kMaxDims);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t n = read_u64(what + " shape");
      if (n == 0) fail_at(dims_at, "{}: dimension {} is 0", what, d);
      if (n > (uint64_t(1) << 62) / elements) fail_at(dims_at, "{}: shape overflows", what);
      elements *= n;
      t.shape.push_back(n);
    }
    const size_t type_at = pos_;
    const uint32_t type_id = read_u32(what + " type");
    const auto traits = tensor_type_traits(type_id);
    if (!traits) fail_at(type_at, "{}: unknown tensor type {}", what, type_id);
    t.type = traits->type;
    if (t.shape[0] % traits->block_elements != 0) {
      fail_at(dims_at, "{}: row length {} is not a multiple of the {} block size {}", what, t.shape[0], traits->name,
              traits->block_elements);
    }
    t.bytes = elements / traits->block_elements * traits->block_bytes;
    const size_t offset_at = pos_;
    t.offset = read_u64(what + " offset");
    if (t.offset % f_.alignment_ != 0) {
      fail_at(offset_at, "{}: offset {} is not a multiple of the alignment {}", what, t.offset, f_.alignment_);
    }
    f_.tensors_.push_back(std::move(t));
  }

  void check_tensor_layout() {
    const uint64_t file_size = size_;
    const uint64_t data_size = file_size > f_.data_offset_ ? file_size - f_.data_offset_ : 0;
    std::vector<const TensorInfo*> by_offset;
    for (const auto& t : f_.tensors_) {
      if (t.offset > data_size || t.bytes > data_size - t.offset) {
        throw_error("{}: tensor {}: bytes [{}, {}) of the data section lie outside the file (data section has {} bytes)",
                    f_.source_, t.name, t.offset, t.offset + t.bytes, data_size);
      }
      by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const TensorInfo& prev = *by_offset[i - 1];
      const TensorInfo& cur = *by_offset[i];
      if (prev.offset + prev.bytes > cur.offset) {
        throw_error("{}: tensors {} (bytes [{}, {})) and {} (bytes [{}, {})) overlap", f_.source_, prev.name,
                    prev.offset, prev.offset + prev.bytes, cur.name, cur.offset, cur.offset + cur.bytes);
      }
    }
  }

  GgufFile& f_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::unordered_set<std::string> seen_names_;
};

GgufFile GgufFile::parse(std::span<const uint8_t> bytes, const std::string& source) {
  GgufFile f;
  f.bytes_ = bytes;
  f.source_ = source;
  Parser(f).run();
  return f;
}

GgufFile GgufFile::open(const std::string& path) {
  auto mapping = std::make_shared<MappedFile>(path);
  GgufFile f = parse(mapping->bytes(), path);
  f.mapping_ = std::move(mapping);
  return f;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::span<const uint8_t> GgufFile::tensor_data(const TensorInfo& tensor) const {
  return bytes_.subspan(data_offset_ + tensor.offset, tensor.bytes);
}

std::string GgufFile::architecture() const {
  const Value* v = metadata_.find("general.architecture");
  return v != nullptr && v->type() == ValueType::STRING ? v->as_string() : std::string();
}

}  // namespace vellum::gguf
