#include "gguf/value.h"

#include <bit>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace vellum::gguf {

std::string_view value_type_name(ValueType type) {
  switch (type) {
    case ValueType::U8: return "u8";
    case ValueType::I8: return "i8";
    case ValueType::U16: return "u16";
    case ValueType::I16: return "i16";
    case ValueType::U32: return "u32";
    case ValueType::I32: return "i32";
    case ValueType::F32: return "f32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::U64: return "u64";
    case ValueType::I64: return "i64";
    case ValueType::F64: return "f64";
  }
  return "unknown";
}

size_t scalar_size(ValueType type) {
  switch (type) {
    case ValueType::U8: case ValueType::I8: case ValueType::BOOL: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::STRING: case ValueType::ARRAY: return 0;
  }
  return 0;
}

Value Value::scalar(ValueType type, uint64_t bits) {
  Value v;
  v.type_ = type;
  v.bits_ = bits;
  return v;
}

Value Value::signed_scalar(ValueType type, int64_t value) { return scalar(type, static_cast<uint64_t>(value)); }

Value Value::f32(float v) { return scalar(ValueType::F32, std::bit_cast<uint64_t>(static_cast<double>(v))); }
Value Value::f64(double v) { return scalar(ValueType::F64, std::bit_cast<uint64_t>(v)); }

Value Value::string(std::string s) {
  Value v;
  v.type_ = ValueType::STRING;
  v.string_ = std::move(s);
  return v;
}

Value Value::array(ValueType element_type, std::vector<Value> items) {
  for (const auto& item : items) {
    if (item.type_ != element_type) {
      throw_error("array of {}: item of type {}", value_type_name(element_type), item.type_description());
    }
  }
  Value v;
  v.type_ = ValueType::ARRAY;
  v.array_type_ = element_type;
  v.array_ = std::move(items);
  return v;
}

Value Value::string_array(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const auto& s : items) values.push_back(string(s));
  return array(ValueType::STRING, std::move(values));
}

Value Value::f32_array(const std::vector<float>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (float f : items) values.push_back(f32(f));
  return array(ValueType::F32, std::move(values));
}

Value Value::i32_array(const std::vector<int32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (int32_t x : items) values.push_back(i32(x));
  return array(ValueType::I32, std::move(values));
}

std::string Value::type_description() const {
  if (type_ != ValueType::ARRAY) return std::string(value_type_name(type_));
  if (array_type_ == ValueType::ARRAY && !array_.empty()) return "array<" + array_.front().type_description() + ">";
  return "array<" + std::string(value_type_name(array_type_)) + ">";
}

void Value::type_mismatch(std::string_view wanted) const {
  throw_error("expected {}, found {}", wanted, type_description());
}

void Value::expect(ValueType wanted) const {
  if (type_ != wanted) type_mismatch(value_type_name(wanted));
}

uint8_t Value::as_u8() const { expect(ValueType::U8); return static_cast<uint8_t>(bits_); }
int8_t Value::as_i8() const { expect(ValueType::I8); return static_cast<int8_t>(bits_); }
uint16_t Value::as_u16() const { expect(ValueType::U16); return static_cast<uint16_t>(bits_); }
int16_t Value::as_i16() const { expect(ValueType::I16); return static_cast<int16_t>(bits_); }
uint32_t Value::as_u32() const { expect(ValueType::U32); return static_cast<uint32_t>(bits_); }
int32_t Value::as_i32() const { expect(ValueType::I32); return static_cast<int32_t>(bits_); }
uint64_t Value::as_u64() const { expect(ValueType::U64); return bits_; }
int64_t Value::as_i64() const { expect(ValueType::I64); return static_cast<int64_t>(bits_); }
float Value::as_f32() const { expect(ValueType::F32); return static_cast<float>(std::bit_cast<double>(bits_)); }
double Value::as_f64() const { expect(ValueType::F64); return std::bit_cast<double>(bits_); }
bool Value::as_bool() const { expect(ValueType::BOOL); return bits_ != 0; }
const std::string& Value::as_string() const { expect(ValueType::STRING); return string_; }

bool Value::is_integer() const {
  switch (type_) {
    case ValueType::U8: case ValueType::I8: case ValueType::U16: case ValueType::I16:
    case ValueType::U32: case ValueType::I32: case ValueType::U64: case ValueType::I64: return true;
    default: return false;
  }
}

int64_t Value::as_int() const {
  if (!is_integer()) type_mismatch("an integer");
  if (type_ == ValueType::U64 && bits_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw_error("value {} does not fit in i64", bits_);
  }
  return static_cast<int64_t>(bits_);
}

double Value::as_float() const {
  if (type_ != ValueType::F32 && type_ != ValueType::F64) type_mismatch("a float");
  return std::bit_cast<double>(bits_);
}

ValueType Value::array_type() const { expect(ValueType::ARRAY); return array_type_; }
const std::vector<Value>& Value::as_array() const { expect(ValueType::ARRAY); return array_; }

nlohmann::json Value::to_json() const {
  switch (type_) {
    case ValueType::U8: case ValueType::U16: case ValueType::U32: case ValueType::U64: return bits_;
    case ValueType::I8: case ValueType::I16: case ValueType::I32: case ValueType::I64:
      return static_cast<int64_t>(bits_);
    case ValueType::F32: case ValueType::F64: return std::bit_cast<double>(bits_);
    case ValueType::BOOL: return bits_ != 0;
    case ValueType::STRING: return string_;  // may be invalid UTF-8: dump with error_handler_t::replace
    case ValueType::ARRAY: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : array_) out.push_back(item.to_json());
      return out;
    }
  }
  return nullptr;
}

std::string Value::to_display(size_t max_items, size_t max_chars) const {
  std::string out;
  if (type_ == ValueType::STRING) {
    std::string s;
    for (char c : string_) {
      if (c == '\n') s += "\\n";
      else if (static_cast<unsigned char>(c) < 0x20) s += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      else s += c;
    }
    if (s.size() > max_chars) {
      size_t cut = max_chars;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;  // keep UTF-8 whole
      s = s.substr(0, cut) + "…";
    }
    return "\"" + s + "\"";
  }
  if (type_ == ValueType::ARRAY) {
    out = "[";
    for (size_t i = 0; i < array_.size() && i < max_items; ++i) {
      if (i) out += ", ";
      out += array_[i].to_display(max_items, 20);
    }
    if (array_.size() > max_items) out += fmt::format(", … ({} items)", array_.size());
    return out + "]";
  }
  if (type_ == ValueType::F32) return fmt::format("{}", as_f32());  // shortest form that reads back
  return to_json().dump();
}

bool Value::operator==(const Value& other) const {
  return type_ == other.type_ && bits_ == other.bits_ && string_ == other.string_ &&
         array_type_ == other.array_type_ && array_ == other.array_;
}

}  // namespace vellum::gguf
