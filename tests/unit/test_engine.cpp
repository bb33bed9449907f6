// The threaded engine on the real stories260K model: streams from several threads, cancellation,
// stop strings, and a soak of many requests with random lengths and cancellations that must end with
// every block free and no thread stuck.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "engine/engine.h"
#include "stories_fixture.h"

namespace vellum::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path kStories = testing::kStoriesDir;
const gguf::GgufFile& stories() { return testing::stories_model(); }

struct Fixture {
  backend::CpuBackend be{2};
  model::Transformer model{stories(), be};
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(stories());
  std::unique_ptr<Engine> engine;
  explicit Fixture(uint32_t budget = 256, uint32_t blocks = 0) {
    EngineConfig c;
    c.scheduler.max_num_batched_tokens = budget;
    c.scheduler.max_num_seqs = 32;
    c.max_seq_len = 512;
    c.num_blocks = blocks;
    engine = std::make_unique<Engine>(model, be, c, tok, std::vector<int32_t>{tok.eos()});
  }
  Request request(const std::string& prompt, uint32_t max_tokens, float temperature = 0, uint64_t seed = 0) {
    Request r;
    r.prompt = tok.encode(prompt, true, false);
    r.max_tokens = max_tokens;
    r.sampling.temperature = temperature;
    r.sampling.seed = seed;
    return r;
  }
};

struct Collected {
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::None;
  StreamEvent last;
};

Collected collect(RequestHandle& h) {
  Collected c;
  while (auto e = h.next()) {
    c.text += e->text;
    c.tokens.insert(c.tokens.end(), e->tokens.begin(), e->tokens.end());
    if (e->finish != FinishReason::None) {
      c.finish = e->finish;
      c.last = *e;
    }
  }
  return c;
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kStories / "stories260K.bin")) GTEST_SKIP() << "fixture not found at " << kStories;
  }
};

TEST_F(EngineTest, StreamsFromManyThreadsMatchRunningAlone) {
  const std::vector<std::string> prompts = {"Once upon a time", "The little dog", "One day, a boy named Tim",
                                            "Lily and Ben", "The sun was"};
  std::vector<Collected> alone;
  for (const auto& p : prompts) {
    Fixture f;
    alone.push_back(collect(*f.engine->submit(f.request(p, 40, 0.8f, 7))));
    ASSERT_EQ(alone.back().last.completion_tokens, alone.back().tokens.size());
  }
  Fixture f(64);
  std::vector<Collected> together(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back([&, i] { together[i] = collect(*f.engine->submit(f.request(prompts[i], 40, 0.8f, 7))); });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i].tokens, alone[i].tokens) << prompts[i];
    EXPECT_EQ(together[i].text, alone[i].text) << prompts[i];
    EXPECT_EQ(together[i].last.prompt_tokens, f.tok.encode(prompts[i], true, false).size());
  }
}

TEST_F(EngineTest, AFreshEngineReportsItsEmptyPool) {
  Fixture f(256, 40);
  const EngineStats s = f.engine->stats();
  EXPECT_EQ(s.kv.blocks_total, 40u) << "before the first step, /metrics must show the pool";
  EXPECT_EQ(s.kv.blocks_free, 40u);
  EXPECT_EQ(s.kv.blocks_used, 0u);
  EXPECT_EQ(f.engine->kv_stats().blocks_total, 40u);
}

TEST_F(EngineTest, TextIsTheDecodedTokens) {
  Fixture f;
  const auto c = collect(*f.engine->submit(f.request("Once upon a time", 60)));
  EXPECT_EQ(c.finish, FinishReason::Length);
  EXPECT_EQ(c.text, f.tok.decode(c.tokens));
  // greedy: llama2.c's run.c continuation of this prompt
  EXPECT_EQ(c.text.rfind(", there was a little girl named Lily.", 0), 0u) << c.text;
}

TEST_F(EngineTest, StopStringEndsTheStream) {
  Fixture f;
  GenerationOptions o;
  o.stop = {"little girl"};
  const auto c = collect(*f.engine->submit(f.request("Once upon a time", 60), o));
  EXPECT_EQ(c.finish, FinishReason::Stop);
  EXPECT_EQ(c.text, ", there was a ");
}

// Logprobs stay parallel to the tokens of every event (a stop string cutting an event included) and
// the engine's statistics count the finished requests.
TEST_F(EngineTest, EventsCarryLogprobsAndStatsCount) {
  Fixture f;
  GenerationOptions o;
  o.stop = {"little girl"};
  Request r = f.request("Once upon a time", 60);
  r.logprobs = 2;
  auto h = f.engine->submit(r, o);
  size_t tokens = 0;
  while (auto e = h->next()) {
    ASSERT_EQ(e->logprobs.size(), e->tokens.size());
    for (size_t i = 0; i < e->tokens.size(); ++i) {
      EXPECT_EQ(e->logprobs[i].token, e->tokens[i]);
      ASSERT_EQ(e->logprobs[i].top.size(), 2u);
      EXPECT_EQ(e->logprobs[i].top[0].first, e->tokens[i]) << "greedy";
      EXPECT_LE(e->logprobs[i].logprob, 0.0f);
    }
    tokens += e->tokens.size();
  }
  EXPECT_GT(tokens, 3u);
  Request plain = f.request("Once upon a time", 7);
  collect(*f.engine->submit(plain));
  for (int i = 0; i < 200 && f.engine->stats().requests_finished < 2; ++i) std::this_thread::sleep_for(5ms);
  const EngineStats s = f.engine->stats();
  EXPECT_EQ(s.requests_finished, 2u);
  EXPECT_EQ(s.running, 0u);
  EXPECT_EQ(s.waiting, 0u);
  EXPECT_EQ(s.prompt_tokens, 2 * plain.prompt.size());
  EXPECT_EQ(s.cached_prompt_tokens, 0u);  // a prompt shorter than one block shares nothing
  EXPECT_GE(s.generation_tokens, tokens + 7);  // the stop string ends the first one a step or so late
  EXPECT_GE(s.steps, 8u);
}

TEST_F(EngineTest, StopStringsWaitForMinTokens) {
  Fixture f;
  GenerationOptions o;
  o.stop = {"little girl"};
  Request r = f.request("Once upon a time", 30);
  r.min_tokens = 20;  // "little girl" completes around the 9th token
  const auto c = collect(*f.engine->submit(r, o));
  EXPECT_EQ(c.finish, FinishReason::Length);
  EXPECT_EQ(c.tokens.size(), 30u);
  EXPECT_NE(c.text.find("little girl"), std::string::npos) << c.text;
}

TEST_F(EngineTest, CancelMidStreamFreesEveryBlock) {
  Fixture f;
  auto h = f.engine->submit(f.request("Once upon a time", 400));
  auto first = h->next();
  ASSERT_TRUE(first.has_value());
  f.engine->cancel(h->id());
  const auto rest = collect(*h);
  EXPECT_EQ(rest.finish, FinishReason::Aborted);
  EXPECT_LT(rest.tokens.size(), 400u);
  // the stats snapshot follows the step that freed the blocks
  for (int i = 0; i < 200 && f.engine->kv_stats().blocks_used != 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(f.engine->kv_stats().blocks_used, 0u);
  EXPECT_EQ(f.engine->kv_stats().num_sequences, 0u);
}

TEST_F(EngineTest, InvalidRequestThrowsAtSubmit) {
  Fixture f;
  Request r = f.request("x", 5);
  r.sampling.top_p = 0;
  EXPECT_THROW(f.engine->submit(r), Error);
  EXPECT_THROW(f.engine->submit(Request{}), Error);
}

// submit_all hands every request to the engine before its next step: the first step prefills all of
// them, so the run takes exactly max_tokens steps (each step gives every sequence one token), and the
// streams equal each request run alone. An invalid request among them queues none.
TEST_F(EngineTest, SubmitAllStartsEveryRequestInOneStep) {
  Fixture f;
  const std::vector<std::string> prompts = {"Once upon a time", "The dog", "Lily saw a bird", "One day", "Tom and", "It was"};
  std::vector<Request> reqs;
  for (size_t i = 0; i < prompts.size(); ++i) reqs.push_back(f.request(prompts[i], 20, 0.9f, 11 + i));
  Request bad = f.request("x", 5);
  bad.sampling.top_p = 0;
  std::vector<Request> with_bad = reqs;
  with_bad.push_back(bad);
  EXPECT_THROW(f.engine->submit_all(with_bad), Error);
  EXPECT_EQ(f.engine->stats().waiting, 0u);
  const auto handles = f.engine->submit_all(reqs);
  ASSERT_EQ(handles.size(), reqs.size());
  std::vector<Collected> together;
  for (const auto& h : handles) together.push_back(collect(*h));
  // The counters are published after a step's tokens are delivered: wait for the last step's.
  for (int i = 0; i < 2000 && f.engine->stats().requests_finished < reqs.size(); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(f.engine->stats().steps, 20u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    Fixture alone;
    const Collected a = collect(*alone.engine->submit(reqs[i]));
    EXPECT_EQ(together[i].tokens.size(), 20u) << i;
    EXPECT_EQ(together[i].tokens, a.tokens) << i;
  }
}

// A step's events are queued before its readers are woken, each reader once (all branches of an n > 1
// request), and only readers that wait are woken, from another thread when there are several. Readers
// blocked throughout the run and readers that look only once everything finished get the same events
// (same branches, tokens, text, finishes, in the same order), and no blocked reader misses a wake-up.
TEST_F(EngineTest, EventsAreTheSameWhetherReadersWaitOrNot) {
  const std::vector<std::string> prompts = {"Once upon a time", "The dog", "Lily saw a bird", "One day", "Tom and"};
  auto requests = [&](Fixture& f) {
    std::vector<Request> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) {
      reqs.push_back(f.request(prompts[i], 24, 0.9f, 3 + i));
      reqs.back().ignore_eos = true;
    }
    reqs[1].n = 3;  // three branches: three events a step for one handle
    return reqs;
  };
  using Events = std::vector<StreamEvent>;
  auto same = [](const Events& a, const Events& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].index != b[i].index || a[i].tokens != b[i].tokens || a[i].text != b[i].text ||
          a[i].finish != b[i].finish || a[i].completion_tokens != b[i].completion_tokens)
        return false;
    }
    return true;
  };

  Fixture live;
  const auto live_handles = live.engine->submit_all(requests(live));
  std::vector<Events> waited(prompts.size());
  std::vector<std::thread> readers;
  std::atomic<int> stuck{0};
  for (size_t i = 0; i < prompts.size(); ++i) {
    readers.emplace_back([&, i] {
      for (;;) {
        // A lost wake-up shows as a wait that runs to its timeout (the run takes well under a second).
        const auto t0 = std::chrono::steady_clock::now();
        auto e = live_handles[i]->next_for(5s);
        if (std::chrono::steady_clock::now() - t0 >= 5s) ++stuck;
        if (!e) break;
        waited[i].push_back(std::move(*e));
      }
      if (!live_handles[i]->done()) ++stuck;
    });
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(stuck.load(), 0);

  Fixture late;
  const auto late_handles = late.engine->submit_all(requests(late));
  // The counters are published after a step's events are queued: then every event is there.
  for (int i = 0; i < 5000 && late.engine->stats().requests_finished < prompts.size(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(late.engine->stats().requests_finished, prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    Events queued;
    while (auto e = late_handles[i]->next()) queued.push_back(std::move(*e));
    EXPECT_TRUE(late_handles[i]->done());
    size_t finishes = 0;
    for (const auto& e : queued) finishes += e.finish != FinishReason::None;
    EXPECT_EQ(finishes, i == 1 ? 3u : 1u) << i;
    EXPECT_GE(queued.size(), i == 1 ? 3 * 24u : 24u) << i;  // one event a token: nothing merged
    EXPECT_TRUE(same(waited[i], queued)) << "request " << i << ": " << waited[i].size() << " events read live, "
                                         << queued.size() << " read after the run";
  }
}

TEST_F(EngineTest, SoakEndsWithEveryBlockFree) {
  Fixture f(128, 96);  // a small pool: preemptions happen
  std::mt19937 rng(5);
  std::vector<std::shared_ptr<RequestHandle>> handles;
  std::atomic<int> finished{0};
  std::vector<std::thread> readers;
  const int kRequests = 1000;
  for (int i = 0; i < kRequests; ++i) {
    Request r;
    r.prompt.push_back(1);
    const int len = 1 + static_cast<int>(rng() % 60);
    for (int t = 0; t < len; ++t) r.prompt.push_back(3 + static_cast<int>(rng() % 500));
    r.max_tokens = 1 + rng() % 40;
    r.sampling.temperature = (rng() % 2) ? 0.0f : 1.0f;
    r.sampling.seed = rng();
    r.ignore_eos = rng() % 2;
    auto h = f.engine->submit(r);
    if (rng() % 5 == 0) f.engine->cancel(h->id());
    handles.push_back(h);
  }
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < handles.size(); i += 4) {
        for (;;) {
          auto e = handles[i]->next_for(30s);
          if (!e) break;  // finished (or stuck: the count below tells)
        }
        if (handles[i]->done()) ++finished;
      }
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(finished.load(), kRequests) << "some request never finished";
  for (int i = 0; i < 200 && f.engine->kv_stats().blocks_used != 0; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(f.engine->stats().requests_finished, static_cast<uint64_t>(kRequests));
  EXPECT_GT(f.engine->stats().preemptions, 0u) << "the pool was meant to be small";
  EXPECT_EQ(f.engine->kv_stats().blocks_used, 0u);
  EXPECT_EQ(f.engine->kv_stats().num_sequences, 0u);
}

}  // namespace
}  // namespace vellum::engine
