// The Jinja interpreter on its own: snippets checked byte for byte against Python jinja2 as Hugging
// Face configures it (tests/data/jinja_cases.json, written by tools/gen_jinja_cases.py), plus the
// limits that keep hostile templates bounded and the shape of errors.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/jinja/template.h"
#include "tokenizer/jinja/value.h"

namespace {

using vellum::jinja::RenderOptions;
using vellum::jinja::Template;
using vellum::jinja::TemplateRaised;

constexpr std::time_t kPinnedNow = 1795262400;  // 2026-11-21 12:00:00 UTC

std::string render(const std::string& src, const nlohmann::ordered_json& ctx = nlohmann::ordered_json::object(),
                   RenderOptions options = {}) {
  options.now = kPinnedNow;
  return Template(src).render(ctx, options);
}

TEST(JinjaOracle, MatchesPythonJinja2) {
  const std::string path = std::string(VELLUM_TEST_DATA_DIR) + "/jinja_cases.json";
  std::ifstream f(path);
  ASSERT_TRUE(f) << "missing " << path;
  const auto data = nlohmann::ordered_json::parse(f);
  int n = 0;
  for (const auto& c : data["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    std::string got, error;
    try {
      got = render(c["template"], c["context"]);
    } catch (const vellum::Error& e) {
      error = e.what();
    }
    if (c.contains("error")) {
      EXPECT_FALSE(error.empty()) << name << ": expected an error (" << c["error"].get<std::string>()
                                  << "), got: " << got;
    } else {
      EXPECT_EQ(error, "") << name;
      EXPECT_EQ(got, c["expected"].get<std::string>()) << name << "\ntemplate: " << c["template"].get<std::string>();
    }
    ++n;
  }
  EXPECT_GT(n, 100);
}

TEST(JinjaErrors, RaiseExceptionCarriesTheTemplatesMessage) {
  try {
    render("{{ raise_exception('Conversation roles must alternate') }}");
    FAIL() << "no exception";
  } catch (const TemplateRaised& e) {
    EXPECT_STREQ(e.what(), "Conversation roles must alternate");
  }
}

TEST(JinjaErrors, SyntaxErrorsNameTheLine) {
  try {
    Template t("line one\n{% if x %}\n{{ 1 + }}\n{% endif %}");
    FAIL() << "parsed";
  } catch (const vellum::Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
}

TEST(JinjaErrors, EvaluationErrorsNameTheLine) {
  try {
    render("a\nb\n{{ 'x' + 1 }}");
    FAIL() << "rendered";
  } catch (const vellum::Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
}

TEST(JinjaErrors, TruncatedInputIsRejected) {
  // Found by fuzzing: a backslash at the very end of a string literal used to loop forever.
  EXPECT_THROW(Template("{{ 'abc\\"), vellum::Error);
  EXPECT_THROW(Template("{{ 'abc"), vellum::Error);
  EXPECT_THROW(Template("{%"), vellum::Error);
  EXPECT_THROW(Template("{{"), vellum::Error);
  EXPECT_THROW(Template("{% raw %}abc"), vellum::Error);
  EXPECT_THROW(Template("{{ x ) }}"), vellum::Error);
}

TEST(JinjaErrors, UnsupportedTagsAreRejected) {
  EXPECT_THROW(Template("{% include 'x.jinja' %}"), vellum::Error);
  EXPECT_THROW(Template("{% extends 'base' %}"), vellum::Error);
  EXPECT_THROW(Template("{% for x in y recursive %}{% endfor %}"), vellum::Error);
}

TEST(JinjaLimits, InfiniteishLoopsStop) {
  RenderOptions o;
  o.limits.max_steps = 100000;
  EXPECT_THROW(render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", {}, o),
               vellum::Error);
  EXPECT_THROW(render("{{ range(10000000000) | length }}", {}, o), vellum::Error);
}

TEST(JinjaLimits, RecursionStops) {
  EXPECT_THROW(render("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), vellum::Error);
  // Deeply nested syntax is refused by the parser rather than recursing without bound.
  EXPECT_THROW(Template("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"), vellum::Error);
  EXPECT_THROW(Template("{{ " + std::string(100000, '[') + " }}"), vellum::Error);
  std::string nested_ifs;
  for (int i = 0; i < 5000; ++i) nested_ifs += "{% if true %}";
  EXPECT_THROW(Template{nested_ifs}, vellum::Error);
}

TEST(JinjaLimits, OutputAndStringSizeAreBounded) {
  RenderOptions o;
  o.limits.max_output_bytes = 1 << 20;
  EXPECT_THROW(render("{{ 'x' * 100000000 }}", {}, o), vellum::Error);
  EXPECT_THROW(render("{{ 'abc' * 9223372036854775807 }}", {}, o), vellum::Error);
  EXPECT_THROW(render("{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                      {}, o),
               vellum::Error);
  EXPECT_THROW(render("{% for i in range(100000) %}{{ 'xxxxxxxxxxxxxxxxxxxx' }}{% endfor %}", {}, o), vellum::Error);
  EXPECT_THROW(render("{{ 2 ** 64 }}"), vellum::Error);  // int64 overflow is an error, not UB
}

TEST(JinjaLimits, SelfReferencingNamespacesDoNotLeakOrLoop) {
  // Printing a namespace that contains itself must terminate (depth limit); ASan checks the leak.
  EXPECT_THROW(render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"), vellum::Error);
  EXPECT_NO_THROW(render("{% set ns = namespace() %}{% set ns.me = ns %}{% macro m() %}{% endmacro %}x"));
}

TEST(JinjaTemplate, RendersConcurrently) {
  const Template t("{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}");
  nlohmann::ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  std::vector<std::thread> threads;
  std::vector<std::string> out(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) out[static_cast<size_t>(i)] = t.render(ctx);
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& s : out) EXPECT_EQ(s, "user:hi;");
}

TEST(ChatTemplateApi, RenderWithMessagesToolsAndExtraContext) {
  const vellum::tokenizer::ChatTemplate t(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if tools is defined %}[{{ tools | map(attribute='function.name') | join(',') }}]{% endif %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}{% if enable_thinking is defined %}{{ enable_thinking }}{% endif %}");
  const auto messages = nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])");
  const auto tools = nlohmann::ordered_json::parse(R"([{"type":"function","function":{"name":"f"}}])");
  EXPECT_EQ(t.render(messages, nullptr, true, "<s>", "</s>"), "<s><user>hi<assistant>");
  EXPECT_EQ(t.render(messages, nlohmann::ordered_json::array(), false, "<s>", "</s>"), "<s><user>hi");
  EXPECT_EQ(t.render(messages, tools, false, "", "", {{"enable_thinking", false}}), "<user>hi[f]False");
  EXPECT_THROW(vellum::tokenizer::ChatTemplate("{% if %}"), vellum::Error);
}

TEST(JinjaValue, PythonFloatRepr) {
  using vellum::jinja::python_float_repr;
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(-2.5e-10), "-2.5e-10");
  EXPECT_EQ(python_float_repr(1.7976931348623157e308), "1.7976931348623157e+308");
}

}  // namespace
