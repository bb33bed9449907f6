#pragma once
// Walks a parsed template and produces its output. One Evaluator per render; it owns the scope
// chain (Frame), the limits that keep a hostile template bounded (steps, recursion depth, string
// and output size), and the list of objects whose reference cycles it breaks when it finishes.
//
// Scoping follows jinja2: every for-loop iteration and every macro call gets a fresh frame whose
// parent is the frame where the loop runs / the macro was defined, so `set` inside a loop does not
// leak out (hence `namespace()`), while macros see their defining scope's current values.

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"

namespace vellum::jinja {

// What a template's own raise_exception(msg) throws: the message is the template's, verbatim.
class TemplateRaised : public Error {
 public:
  explicit TemplateRaised(const std::string& message) : Error(message) {}
};

struct RenderLimits {
  size_t max_output_bytes = 32u << 20;  // also bounds any single string the template builds
  uint64_t max_steps = 20'000'000;      // statements + loop iterations + calls + collection items
  int max_depth = 400;                  // nested evaluation (expressions, statements, macro calls)
};

struct RenderOptions {
  RenderLimits limits;
  // What strftime_now() formats: a fixed instant (UTC) when set, else the current local time.
  std::optional<std::time_t> now;
};

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
  const Value* find(const std::string& name) const;
};
using FramePtr = std::shared_ptr<Frame>;

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> kwargs;

  // Python-style binding: positional index `i` or keyword `name`, removed from kwargs once taken.
  Value get(size_t i, const char* name, Value fallback = Value());
  bool has(size_t i, const char* name) const;
  // Errors for arguments that no parameter took ("unexpected keyword argument 'x'").
  void finish(const std::string& what, size_t n_params) const;
};

class Evaluator {
 public:
  explicit Evaluator(RenderOptions options);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  std::string render(const Body& body, const Dict& context);

  Value eval(const Expr& e, const FramePtr& frame);
  Value call(const Value& callee, CallArgs& args);
  std::string render_body(const Body& body, const FramePtr& frame);

  // Attribute and item access with jinja2's sandboxed semantics.
  Value get_attr(const Value& obj, const std::string& name);
  Value get_item(const Value& obj, const Value& key);

  // Limits.
  void step(uint64_t n = 1);
  void check_string_size(size_t n) const;
  const RenderOptions& options() const { return options_; }

  // Objects holding frames or other objects register here so cycles are broken at the end.
  void track(std::function<void()> clear) { cleanups_.push_back(std::move(clear)); }

  enum class Flow { Normal, Break, Continue };

 private:
  friend struct DepthGuard;
  Flow exec(const Body& body, const FramePtr& frame, std::string& out);
  Flow exec_stmt(const Stmt& s, const FramePtr& frame, std::string& out);
  Flow exec_for(const Stmt& s, const FramePtr& frame, std::string& out);
  void exec_set(const Stmt& s, const FramePtr& frame);
  void exec_call_block(const Stmt& s, const FramePtr& frame, std::string& out);
  void assign_targets(const Stmt& s, const FramePtr& frame, const Value& v);
  Value apply_filter_chain(const Expr& e, const Value& base, const FramePtr& frame);
  Value lookup(const std::string& name, const FramePtr& frame);
  Value eval_binary(const Expr& e, const FramePtr& frame);
  Value eval_compare(const Expr& e, const FramePtr& frame);
  Value eval_call(const Expr& e, const FramePtr& frame);
  Value eval_filter(const Expr& e, const FramePtr& frame);
  Value eval_test(const Expr& e, const FramePtr& frame);
  Value eval_getitem(const Expr& e, const FramePtr& frame);
  void eval_args(const Expr& e, size_t first, const FramePtr& frame, CallArgs& args);
  void append(std::string& out, const std::string& s) const;

  RenderOptions options_;
  uint64_t steps_ = 0;
  int depth_ = 0;
  std::vector<std::function<void()>> cleanups_;

 public:
  struct DepthGuard {
    explicit DepthGuard(Evaluator& ev);
    ~DepthGuard() { --ev_.depth_; }
    Evaluator& ev_;
  };
};

// Python semantics shared by the evaluator and the builtins.
Value binary_op(Evaluator& ev, const std::string& op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);
// Iteration as a for-loop or list() sees it; throws for non-iterables.
std::vector<Value> iterate(const Value& v);
[[noreturn]] void undefined_error(const Value& v);

}  // namespace vellum::jinja
