// GGUF reader/writer: round trips of every value type, typed-accessor errors, and malformed files
// (each must give vellum::Error naming the problem, never a crash).

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace vellum::gguf {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("vellum_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Little-endian byte builder for hand-made (and deliberately broken) files.
struct Bytes {
  std::vector<uint8_t> b;
  template <typename T>
  Bytes& raw(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
    return *this;
  }
  Bytes& str(const std::string& s) {
    raw<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& pad(size_t alignment) {
    while (b.size() % alignment) b.push_back(0);
    return *this;
  }
  Bytes& header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    return raw<uint32_t>(kMagic).raw<uint32_t>(version).raw<uint64_t>(tensors).raw<uint64_t>(kvs);
  }
};

std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::parse(bytes, "test.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A valid file with one f32 tensor of 4 elements at offset 0.
Bytes one_tensor_file(uint32_t type = 0, uint64_t offset = 0, uint64_t ne0 = 4) {
  Bytes f;
  f.header(1, 1).str("general.architecture").raw<uint32_t>(8).str("llama");
  f.str("w").raw<uint32_t>(1).raw<uint64_t>(ne0).raw<uint32_t>(type).raw<uint64_t>(offset);
  f.pad(32);
  for (int i = 0; i < 4; ++i) f.raw<float>(static_cast<float>(i));
  return f;
}

TEST(Gguf, RoundTripsEveryValueTypeAndTensors) {
  GgufWriter w(64);
  auto& md = w.metadata();
  md.set("general.architecture", Value::string("llama"));
  md.set("t.u8", Value::u8(200));
  md.set("t.i8", Value::i8(-100));
  md.set("t.u16", Value::u16(60000));
  md.set("t.i16", Value::i16(-30000));
  md.set("t.u32", Value::u32(4000000000u));
  md.set("t.i32", Value::i32(-2000000000));
  md.set("t.u64", Value::u64(18000000000000000000ull));
  md.set("t.i64", Value::i64(-9000000000000000000ll));
  md.set("t.f32", Value::f32(0.1f));
  md.set("t.f64", Value::f64(0.1));
  md.set("t.bool", Value::boolean(true));
  md.set("t.str", Value::string("héllo\nworld"));
  md.set("t.empty", Value::string(""));
  md.set("t.strs", Value::string_array({"a", "", "▁b"}));
  md.set("t.nested", Value::array(ValueType::ARRAY, {Value::i32_array({1, 2}), Value::i32_array({})}));
  md.set("t.empty_array", Value::array(ValueType::U8, {}));
  std::vector<uint8_t> data(3 * 5 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
  w.add_tensor("a", TensorType::F32, {5, 3}, data);
  w.add_tensor("b", TensorType::Q8_0, {32, 2}, std::vector<uint8_t>(68, 7));
  const std::string path = temp_path("roundtrip.gguf");
  w.write(path);

  const auto f = GgufFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.architecture(), "llama");
  const auto& m = f.metadata();
  ASSERT_EQ(m.size(), md.size());
  for (size_t i = 0; i < md.size(); ++i) {
    EXPECT_EQ(m.entries()[i].first, md.entries()[i].first);
    EXPECT_TRUE(m.entries()[i].second == md.entries()[i].second) << m.entries()[i].first;
  }
  EXPECT_EQ(m.get<uint8_t>("t.u8"), 200);
  EXPECT_EQ(m.get<int64_t>("t.i64"), -9000000000000000000ll);
  EXPECT_EQ(m.get<float>("t.f32"), 0.1f);
  EXPECT_EQ(m.get<double>("t.f64"), 0.1);
  EXPECT_EQ(m.get<std::string>("t.str"), "héllo\nworld");
  EXPECT_EQ(m.get_array<std::string>("t.strs"), (std::vector<std::string>{"a", "", "▁b"}));
  EXPECT_EQ(m.at("t.nested").type_description(), "array<array<i32>>");
  EXPECT_EQ(m.get_int("t.u16"), 60000);
  EXPECT_EQ(m.get_or<uint32_t>("t.missing", 7u), 7u);

  ASSERT_EQ(f.tensors().size(), 2u);
  const TensorInfo* a = f.find_tensor("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{5, 3}));
  EXPECT_EQ(a->bytes, 60u);
  const auto bytes = f.tensor_data(*a);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), data.begin(), data.end()));
  const TensorInfo* b = f.find_tensor("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->offset % 64, 0u);
  EXPECT_EQ(b->bytes, 68u);
  EXPECT_EQ(f.tensor_data(*b)[67], 7);
  fs::remove(path);
}

TEST(Gguf, TypedAccessorErrorsNameTheKey) {
  Metadata m;
  m.set("llama.block_count", Value::string("five"));
  m.set("tokenizer.ggml.scores", Value::array(ValueType::F32, {Value::f32(1), Value::f32(2)}));
  try {
    m.get<uint32_t>("llama.block_count");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "key llama.block_count: expected u32, found string");
  }
  EXPECT_THROW(m.get_int("llama.block_count"), Error);
  try {
    m.get<uint32_t>("llama.context_length");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "key llama.context_length: missing");
  }
  try {
    m.get_array<int32_t>("tokenizer.ggml.scores");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "key tokenizer.ggml.scores: item 0: expected i32, found f32");
  }
  EXPECT_EQ(m.get_array<float>("tokenizer.ggml.scores"), (std::vector<float>{1, 2}));
}

TEST(Gguf, ParsesHandMadeFile) {
  const auto bytes = one_tensor_file().b;  // parse() borrows: the bytes must outlive the file
  const auto f = GgufFile::parse(bytes, "x");
  ASSERT_EQ(f.tensors().size(), 1u);
  float v[4];
  std::memcpy(v, f.tensor_data(f.tensors()[0]).data(), sizeof v);
  EXPECT_EQ(v[3], 3.0f);
}

TEST(Gguf, Version2IsAccepted) {
  Bytes f;
  f.header(0, 1, 2).str("general.name").raw<uint32_t>(8).str("v2");
  EXPECT_EQ(GgufFile::parse(f.b, "x").version(), 2u);  // f outlives the temporary GgufFile
}

TEST(Gguf, EveryTruncationIsAnError) {
  const auto full = one_tensor_file().b;
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_NE(parse_error(cut), "") << "prefix of " << n << " bytes parsed";
  }
}

TEST(Gguf, RandomCorruptionNeverCrashes) {
  const auto full = one_tensor_file().b;
  std::mt19937 rng(42);
  for (int i = 0; i < 20000; ++i) {
    auto bad = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    try {
      GgufFile::parse(bad, "fuzz");
    } catch (const Error&) {
    }
  }
}

struct BadCase {
  const char* what;
  std::vector<uint8_t> bytes;
  const char* message;  // a substring the error must contain
};

TEST(Gguf, MalformedFilesNameTheProblem) {
  std::vector<BadCase> cases;
  {
    auto f = one_tensor_file();
    f.b[0] = 'X';
    cases.push_back({"magic", f.b, "not a GGUF file"});
  }
  cases.push_back({"version 1", Bytes().header(0, 0, 1).b, "version 1 is not supported"});
  cases.push_back({"version 9", Bytes().header(0, 0, 9).b, "unsupported GGUF version 9"});
  cases.push_back({"big endian", Bytes().header(0, 0, 0x03000000).b, "big-endian"});
  cases.push_back({"kv count", Bytes().header(0, 1ull << 60).b, "metadata count"});
  cases.push_back({"tensor count", Bytes().header(1ull << 60, 0).b, "tensor count"});
  cases.push_back({"string length", Bytes().header(0, 1).raw<uint64_t>(1ull << 40).raw<uint64_t>(0).raw<uint64_t>(0).b, "string length 1099511627776 exceeds the file"});
  cases.push_back({"value type", Bytes().header(0, 1).str("k").raw<uint32_t>(13).raw<uint64_t>(0).b, "key k (type): unknown value type 13"});
  cases.push_back({"array length", Bytes().header(0, 1).str("k").raw<uint32_t>(9).raw<uint32_t>(4).raw<uint64_t>(1ull << 50).b, "array length"});
  cases.push_back({"bool", Bytes().header(0, 1).str("k").raw<uint32_t>(7).raw<uint8_t>(2).b, "neither 0 nor 1"});
  cases.push_back({"empty key", Bytes().header(0, 1).str("").raw<uint32_t>(0).raw<uint8_t>(1).b, "is empty"});
  cases.push_back({"duplicate key", Bytes().header(0, 2).str("k").raw<uint32_t>(0).raw<uint8_t>(1).str("k").raw<uint32_t>(0).raw<uint8_t>(1).b, "duplicate metadata key k"});
  {
    Bytes f;
    f.header(0, 1).str("k").raw<uint32_t>(9);
    for (int d = 0; d < 12; ++d) f.raw<uint32_t>(9).raw<uint64_t>(1);
    f.raw<uint32_t>(0).raw<uint64_t>(0);
    cases.push_back({"nesting", f.b, "nested deeper"});
  }
  cases.push_back({"alignment type", Bytes().header(0, 1).str("general.alignment").raw<uint32_t>(8).str("x").b, "key general.alignment: expected u32, found string"});
  cases.push_back({"alignment value", Bytes().header(0, 1).str("general.alignment").raw<uint32_t>(4).raw<uint32_t>(48).b, "not a power of two"});
  cases.push_back({"tensor type", one_tensor_file(99).b, "unknown tensor type 99"});
  cases.push_back({"misaligned", one_tensor_file(0, 4).b, "not a multiple of the alignment"});
  cases.push_back({"outside", one_tensor_file(0, 32).b, "outside the file"});
  cases.push_back({"block size", one_tensor_file(8, 0, 4).b, "not a multiple of the Q8_0 block size 32"});
  {
    Bytes f;
    f.header(1, 0).str("w").raw<uint32_t>(5);
    for (int i = 0; i < 5; ++i) f.raw<uint64_t>(1);
    cases.push_back({"dims", f.b, "5 dimensions"});
  }
  {
    Bytes f;
    f.header(1, 0).str("w").raw<uint32_t>(2).raw<uint64_t>(4).raw<uint64_t>(0).raw<uint32_t>(0).raw<uint64_t>(0);
    cases.push_back({"zero dim", f.b, "dimension 1 is 0"});
  }
  {
    Bytes f;
    f.header(1, 0).str("w").raw<uint32_t>(2).raw<uint64_t>(1ull << 40).raw<uint64_t>(1ull << 40).raw<uint32_t>(0).raw<uint64_t>(0);
    cases.push_back({"overflow", f.b, "shape overflows"});
  }
  {
    Bytes f;
    f.header(2, 0);
    f.str("a").raw<uint32_t>(1).raw<uint64_t>(16).raw<uint32_t>(0).raw<uint64_t>(0);
    f.str("b").raw<uint32_t>(1).raw<uint64_t>(16).raw<uint32_t>(0).raw<uint64_t>(32);
    f.pad(32);
    for (int i = 0; i < 32; ++i) f.raw<float>(0);
    cases.push_back({"overlap", f.b, "overlap"});
  }
  {
    Bytes f;
    f.header(2, 0);
    f.str("a").raw<uint32_t>(1).raw<uint64_t>(4).raw<uint32_t>(0).raw<uint64_t>(0);
    f.str("a").raw<uint32_t>(1).raw<uint64_t>(4).raw<uint32_t>(0).raw<uint64_t>(32);
    cases.push_back({"duplicate tensor", f.b, "duplicate tensor name a"});
  }
  {
    Bytes f;
    f.header(1, 0).str(std::string(64, 'n')).raw<uint32_t>(1).raw<uint64_t>(4).raw<uint32_t>(0).raw<uint64_t>(0);
    cases.push_back({"long name", f.b, "name longer than 63 bytes"});
  }
  for (const auto& c : cases) {
    const std::string err = parse_error(c.bytes);
    EXPECT_NE(err.find(c.message), std::string::npos) << c.what << ": got \"" << err << "\"";
    EXPECT_EQ(err.rfind("test.gguf: ", 0), 0u) << c.what << ": error does not name the file: " << err;
  }
}

TEST(Gguf, WriterRejectsBadTensors) {
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("x", TensorType::Q4_K, {100}, std::vector<uint8_t>(10)), Error);
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {4}, std::vector<uint8_t>(15)), Error);
  EXPECT_THROW(w.add_tensor(std::string(64, 'x'), TensorType::F32, {1}, std::vector<uint8_t>(4)), Error);
  w.add_tensor("x", TensorType::F32, {1}, std::vector<uint8_t>(4));
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {1}, std::vector<uint8_t>(4)), Error);
  EXPECT_THROW(GgufWriter(48), Error);
}

TEST(Gguf, OpensEveryFixture) {
  const fs::path dir = fs::path(VELLUM_FIXTURES_DIR) / "tokenizers" / "ggml-vocab";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "fixtures not found at " << dir;
  int opened = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    const auto f = GgufFile::open(entry.path().string());
    EXPECT_FALSE(f.architecture().empty()) << entry.path();
    EXPECT_TRUE(f.metadata().contains("tokenizer.ggml.tokens")) << entry.path();
    EXPECT_GT(f.metadata().at("tokenizer.ggml.tokens").as_array().size(), 1000u) << entry.path();
    ++opened;
  }
  EXPECT_GE(opened, 10);
}

TEST(Gguf, MissingFileIsAnError) {
  try {
    GgufFile::open("/nonexistent/model.gguf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vellum::gguf
