#include "engine/engine_core.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "engine/logits_processor.h"
#include "engine/logprobs.h"

namespace vellum::engine {
namespace {

using Clock = std::chrono::steady_clock;
// Adds the time since `t` to `total` and moves `t` to now.
void lap(double& total, Clock::time_point& t) {
  const auto now = Clock::now();
  total += std::chrono::duration<double>(now - t).count();
  t = now;
}

kv::KvConfig make_kv_config(const model::Transformer& model, EngineConfig& c) {
  if (c.max_seq_len == 0) c.max_seq_len = model.hparams().context_train;
  if (c.block_size == 0) throw_error("--block-size must be positive");
  if (c.num_blocks == 0) {
    const uint64_t per_seq = kv::blocks_for_tokens(c.max_seq_len, c.block_size);
    c.num_blocks = static_cast<uint32_t>(std::min<uint64_t>(per_seq * c.scheduler.max_num_seqs, 1u << 20));
  }
  kv::KvConfig k;
  k.block_size = c.block_size;
  k.num_blocks = c.num_blocks;
  k.max_seq_len = c.max_seq_len;
  k.enable_prefix_caching = c.prefix_caching;
  k.hash_seed = 0;  // deterministic block hashes: runs are reproducible
  k.validate();
  return k;
}

}  // namespace

EngineCore::EngineCore(model::Transformer& model, backend::Backend& backend, const EngineConfig& config,
                       std::vector<int32_t> eog_tokens)
    : model_(model), backend_(backend), config_(config), eog_(std::move(eog_tokens)),
      kv_(make_kv_config(model, config_)), scheduler_(config_.scheduler, kv_) {
  backend_.init_kv(model_.kv_layout(config_.block_size, config_.kv_type), config_.num_blocks);
  const unsigned threads = config_.sampling_threads != 0 ? config_.sampling_threads
                                                         : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  if (threads > 1) sampling_pool_ = std::make_unique<ThreadPool>(threads);
}

RequestId EngineCore::add_request(Request request) {
  const RequestId id = next_id_++;
  add_request(std::move(request), id);
  return id;
}

void EngineCore::add_request(Request request, RequestId id) {
  validate(request);
  if (id == 0) throw_error("request id 0 is reserved");
  for (const auto& [key, seq] : sequences_) {
    if (seq->id == id) throw_error("request id {} is in use", id);
  }
  auto seq = std::make_unique<Sequence>(id, next_seq_++, std::move(request));
  scheduler_.add(seq.get());
  sequences_.emplace(seq->seq_id, std::move(seq));
}

void EngineCore::validate(const Request& request) const {
  if (request.prompt.empty()) throw_error("the prompt is empty");
  const uint32_t vocab = model_.hparams().vocab;
  for (int32_t t : request.prompt) {
    if (t < 0 || static_cast<uint32_t>(t) >= vocab) throw_error("prompt token {} is outside the vocabulary ({})", t, vocab);
  }
  if (request.prompt.size() >= config_.max_seq_len) {
    throw_error("the prompt has {} tokens; the context holds {}", request.prompt.size(), config_.max_seq_len);
  }
  if (kv::blocks_for_tokens(request.prompt.size() + 1, config_.block_size) > config_.num_blocks) {
    throw_error("the prompt needs more KV blocks than the pool has ({})", config_.num_blocks);
  }
  request.sampling.validate();
  for (const auto& [token, bias] : request.sampling.logit_bias) {
    if (static_cast<uint32_t>(token) >= vocab) throw_error("logit_bias token {} is outside the vocabulary ({})", token, vocab);
  }
  if (request.logprobs < -1 || request.logprobs > kMaxLogprobs) {
    throw_error("logprobs {} must be in [-1, {}] (-1: none)", request.logprobs, kMaxLogprobs);
  }
  if (request.min_tokens > request.max_tokens) {
    throw_error("min_tokens {} must be <= max_tokens {}", request.min_tokens, request.max_tokens);
  }
  if (request.n == 0 || request.n > 128) throw_error("n {} must be between 1 and 128", request.n);
}

void EngineCore::abort(RequestId id) { aborted_.push_back({id, -1}); }

void EngineCore::abort_branch(RequestId id, uint32_t index) { aborted_.push_back({id, index}); }

RequestUpdate EngineCore::finish(Sequence& seq, FinishReason reason, std::string error) {
  RequestUpdate u;
  u.id = seq.id;
  u.index = seq.index;
  u.finish = reason;
  u.error = std::move(error);
  u.prompt_tokens = seq.prompt_len;
  u.cached_tokens = seq.cached_tokens;
  u.completion_tokens = seq.generated();
  scheduler_.remove(&seq);
  // The request is finished when this was its last live branch.
  const bool last = std::none_of(sequences_.begin(), sequences_.end(), [&](const auto& kv) {
    return kv.second.get() != &seq && kv.second->id == seq.id;
  });
  if (last) ++stats_.requests_finished;
  return u;
}

std::vector<Sequence*> EngineCore::fork_branches(Sequence& parent) {
  parent.forked = true;
  std::vector<Sequence*> out;
  for (uint32_t i = 1; i < parent.request.n; ++i) {
    auto child = std::make_unique<Sequence>(parent.id, next_seq_++, parent.request, i);
    child->tokens = parent.tokens;
    child->forked = true;
    child->admitted_once = true;
    child->prompt_counted = true;  // the parent counted the shared prompt
    child->cached_tokens = parent.cached_tokens;
    kv_.fork(parent.seq_id, child->seq_id);
    scheduler_.add_running(child.get());
    out.push_back(child.get());
    sequences_.emplace(child->seq_id, std::move(child));
  }
  return out;
}

EngineCore::Drawn EngineCore::draw(Sequence& seq, std::span<const float> logits) const {
  const Request& req = seq.request;
  const std::vector<int32_t> suppressed = suppressed_tokens(seq);
  std::vector<float> processed;
  if (adjusts_logits(req.sampling) || !suppressed.empty()) {
    const std::span<const int32_t> all(seq.tokens);
    processed = process_logits(logits, req.sampling, all.first(seq.prompt_len), all.subspan(seq.prompt_len), suppressed);
    logits = processed;
  }
  Drawn d;
  d.token = seq.sampler.sample(logits);
  if (req.logprobs >= 0) d.logprobs.push_back(compute_logprobs(logits, d.token, static_cast<uint32_t>(req.logprobs)));
  return d;
}

std::vector<int32_t> EngineCore::suppressed_tokens(const Sequence& seq) const {
  // Before min_tokens, end-of-generation and stop ids cannot be drawn.
  const Request& req = seq.request;
  std::vector<int32_t> suppressed;
  if (seq.generated() < req.min_tokens) {
    if (!req.ignore_eos) suppressed = eog_;
    suppressed.insert(suppressed.end(), req.stop_token_ids.begin(), req.stop_token_ids.end());
  }
  return suppressed;
}

int32_t EngineCore::logits_kept(const Sequence& seq) const {
  const Request& req = seq.request;
  const bool branches_pending = req.n > 1 && !seq.forked;  // they sample from this row too
  // Penalties, biases and suppressed tokens are edits the backend applies before it reduces the row;
  // logprobs come from its normalizer and best candidates.
  if (!config_.reduce_logits || branches_pending) return 0;
  if (req.sampling.temperature == 0.0f) return 1;
  const uint32_t vocab = model_.hparams().vocab;
  if (seq.sampler.draws_whole_row(vocab)) return model::Transformer::kDraw;
  const int32_t k = req.sampling.top_k;
  return k >= 2 && k <= backend::Backend::kMaxTopK && static_cast<uint32_t>(k) < vocab ? k : 0;
}

void EngineCore::accept_token(Sequence& seq, int32_t token, std::vector<TokenLogprob> logprobs,
                              std::vector<RequestUpdate>& updates) {
  const Request& req = seq.request;
  seq.tokens.push_back(token);
  if (seq.edit_state.ready()) seq.edit_state.add_output(token);
  ++stats_.generation_tokens;
  FinishReason reason = FinishReason::None;
  if (stops(seq, token)) {
    reason = FinishReason::Stop;
  } else if (seq.generated() >= req.max_tokens || seq.tokens.size() >= config_.max_seq_len) {
    reason = FinishReason::Length;
  }
  if (reason == FinishReason::None) {
    RequestUpdate u;
    u.id = seq.id;
    u.index = seq.index;
    u.new_tokens.push_back(token);
    u.prompt_tokens = seq.prompt_len;
    u.cached_tokens = seq.cached_tokens;
    u.completion_tokens = seq.generated();
    u.logprobs = std::move(logprobs);
    updates.push_back(std::move(u));
    return;
  }
  const uint64_t key = seq.seq_id;
  RequestUpdate done = finish(seq, reason);
  done.new_tokens.push_back(token);
  done.logprobs = std::move(logprobs);
  updates.push_back(std::move(done));
  sequences_.erase(key);  // destroys seq
}

EngineStats EngineCore::stats() const {
  EngineStats s = stats_;
  std::unordered_set<RequestId> running, waiting;
  for (const auto& [key, seq] : sequences_) {
    if (seq->state == SequenceState::Running) running.insert(seq->id);
  }
  for (const auto& [key, seq] : sequences_) {
    if (seq->state == SequenceState::Waiting && !running.contains(seq->id)) waiting.insert(seq->id);
  }
  s.running = static_cast<uint32_t>(running.size());
  s.waiting = static_cast<uint32_t>(waiting.size());
  s.kv = kv_.stats();
  return s;
}

bool EngineCore::stops(const Sequence& seq, int32_t token) const {
  if (!seq.request.ignore_eos && std::find(eog_.begin(), eog_.end(), token) != eog_.end()) return true;
  const auto& ids = seq.request.stop_token_ids;
  return std::find(ids.begin(), ids.end(), token) != ids.end();
}

std::vector<RequestUpdate> EngineCore::step() {
  auto t = Clock::now();
  std::vector<RequestUpdate> updates;
  last_ = {};
  for (const PendingAbort& a : aborted_) {
    for (auto it = sequences_.begin(); it != sequences_.end();) {
      if (it->second->id == a.id && (a.index < 0 || it->second->index == a.index)) {
        updates.push_back(finish(*it->second, FinishReason::Aborted));
        it = sequences_.erase(it);
      } else {
        ++it;
      }
    }
  }
  aborted_.clear();
  // A request whose generation limit is 0 finishes before computing anything.
  for (auto it = sequences_.begin(); it != sequences_.end();) {
    if (it->second->request.max_tokens == 0) {
      updates.push_back(finish(*it->second, FinishReason::Length));
      it = sequences_.erase(it);
    } else {
      ++it;
    }
  }

  StepPlan plan = scheduler_.schedule();
  last_.preempted = plan.preempted;
  stats_.preemptions += plan.preempted;
  if (plan.empty()) {
    // Nothing runs and the head of the queue cannot be admitted: it never will be.
    if (scheduler_.num_running() == 0 && scheduler_.num_waiting() > 0) {
      Sequence* head = scheduler_.waiting().front();
      const uint64_t key = head->seq_id;
      updates.push_back(finish(*head, FinishReason::Error, "the request does not fit in the KV cache"));
      sequences_.erase(key);
    }
    lap(stats_.time.schedule, t);
    return updates;
  }
  if (!plan.copies.empty()) {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    for (const auto& c : plan.copies) pairs.emplace_back(c.src, c.dst);
    backend_.copy_blocks(pairs);
  }
  Batch batch;
  batch.block_size = config_.block_size;
  for (const auto& c : plan.chunks) {
    const auto& table = kv_.block_table(c.seq->seq_id).blocks;
    batch.add_sequence({c.seq->tokens.begin() + c.begin, c.seq->tokens.begin() + c.begin + c.count}, c.begin,
                       std::vector<int32_t>(table.begin(), table.end()), c.sample ? Batch::Logits::Last : Batch::Logits::None);
  }
  // Rows sampled with nothing applied to their logits need only their first maximum (greedy), their
  // top_k best candidates, or (no top-k: min-p and top-p cut on the row) a token drawn from the whole
  // row, which the backend finds without copying the row back (a 128k-token vocabulary is 0.5 MB a row).
  std::vector<int32_t> keep;
  std::vector<backend::RowDraw> draws;  // rows drawn on the backend: their cuts and uniform, taken now
  std::vector<backend::LogitEdit> edits;  // the reduced rows' bias, suppressed tokens and penalties
  std::vector<uint32_t> edit_rows;
  std::vector<int32_t> logprobs;  // the alternatives each reduced row reports, or -1
  bool any_logprobs = false;
  for (const auto& c : plan.chunks) {
    if (!c.sample) continue;
    Sequence& seq = *c.seq;
    keep.push_back(logits_kept(seq));
    logprobs.push_back(keep.back() != 0 ? seq.request.logprobs : -1);
    any_logprobs = any_logprobs || logprobs.back() >= 0;
    draws.push_back({});
    if (keep.back() == model::Transformer::kDraw) draws.back() = seq.sampler.row_draw();
    edit_rows.push_back(static_cast<uint32_t>(edits.size()));
    const std::vector<int32_t> suppressed = suppressed_tokens(seq);
    if (keep.back() != 0 && (adjusts_logits(seq.request.sampling) || !suppressed.empty())) {
      if (!seq.edit_state.ready()) {  // then kept up to date by accept_token
        const std::span<const int32_t> all(seq.tokens);
        seq.edit_state.reset(seq.request.sampling, all.first(seq.prompt_len), all.subspan(seq.prompt_len),
                             model_.hparams().vocab);
      }
      seq.edit_state.append(suppressed, edits);
    }
  }
  edit_rows.push_back(static_cast<uint32_t>(edits.size()));
  if (edits.empty()) edit_rows.clear();
  lap(stats_.time.schedule, t);
  const double wait0 = backend_.device_wait_seconds();
  if (!any_logprobs) logprobs.clear();
  const model::Transformer::StepOutput out = model_.forward(batch, keep, draws, edits, edit_rows, logprobs);
  stats_.time.device_wait += backend_.device_wait_seconds() - wait0;
  lap(stats_.time.forward, t);
  scheduler_.on_computed(plan);
  last_.scheduled_tokens = plan.num_tokens();
  last_.sequences = static_cast<uint32_t>(plan.chunks.size());
  total_computed_ += plan.num_tokens();
  ++stats_.steps;
  for (const auto& c : plan.chunks) {
    if (c.seq->prompt_counted) continue;
    c.seq->prompt_counted = true;  // once per request, at its first computed chunk
    stats_.prompt_tokens += c.seq->prompt_len;
    stats_.cached_prompt_tokens += c.seq->cached_tokens;
  }

  const size_t vocab = model_.hparams().vocab;
  size_t row = 0, full_row = 0;
  std::vector<std::pair<Sequence*, std::span<const float>>> whole;  // rows sampled from their whole logits
  for (const auto& c : plan.chunks) {
    if (!c.sample) continue;
    Sequence& seq = *c.seq;
    const int32_t k = keep[row];
    if (k != 0) {  // reduced on the backend
      const size_t r = row++;
      const size_t at = r * static_cast<size_t>(out.top_k);
      const auto n = static_cast<size_t>(out.top_k);
      const std::span<const float> values = k >= 2 ? std::span<const float>(out.top_values.data() + at, n) : std::span<const float>{};
      const std::span<const int32_t> ids = k >= 2 ? std::span<const int32_t>(out.top_ids.data() + at, n) : std::span<const int32_t>{};
      const int32_t token = k >= 2 ? seq.sampler.sample_top(values.first(static_cast<size_t>(k)), ids.first(static_cast<size_t>(k)))
                                   : k == 1 ? out.argmax[r] : out.drawn[r];
      std::vector<TokenLogprob> lp;
      if (!logprobs.empty() && logprobs[r] >= 0) {
        // The token's logit: among a top-k row's candidates (it was drawn from them), else the backend's.
        const float token_logit =
            k >= 2 ? values[static_cast<size_t>(std::find(ids.begin(), ids.end(), token) - ids.begin())] : out.token_logit[r];
        lp.push_back(logprobs_from_candidates(out.log_z[r], token, token_logit, {out.top_values.data() + at, n},
                                              {out.top_ids.data() + at, n}, static_cast<uint32_t>(logprobs[r])));
      }
      accept_token(seq, token, std::move(lp), updates);
      continue;
    }
    ++row;
    const std::span<const float> row_logits(out.logits.data() + full_row++ * vocab, vocab);
    // Branches start from the parent's computed prompt and draw their first token from the same logits.
    std::vector<Sequence*> branches;
    if (seq.request.n > 1 && !seq.forked) branches = fork_branches(seq);
    whole.emplace_back(&seq, row_logits);
    for (Sequence* b : branches) whole.emplace_back(b, row_logits);
  }
  // The whole rows are drawn on the sampling threads (each sequence's own generator: the same
  // tokens on any number of threads), then accepted in order.
  std::vector<Drawn> drawn(whole.size());
  std::vector<std::exception_ptr> failed(whole.size());
  const auto work = [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t i = begin; i < end; ++i) {
      try {
        drawn[static_cast<size_t>(i)] = draw(*whole[static_cast<size_t>(i)].first, whole[static_cast<size_t>(i)].second);
      } catch (...) {
        failed[static_cast<size_t>(i)] = std::current_exception();
      }
    }
  };
  if (sampling_pool_ != nullptr && whole.size() > 1) {
    sampling_pool_->parallel_for(static_cast<int64_t>(whole.size()), work);
  } else {
    work(0, static_cast<int64_t>(whole.size()), 0);
  }
  for (size_t i = 0; i < whole.size(); ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    accept_token(*whole[i].first, drawn[i].token, std::move(drawn[i].logprobs), updates);
  }
  lap(stats_.time.sample, t);
  return updates;
}

}  // namespace vellum::engine
