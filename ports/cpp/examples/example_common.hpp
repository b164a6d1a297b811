// What both example ports share: result codes, items, the seeded-bug switch, the ready queue
// with its workers (the Worker Pool of seeds.md: one mutex, FIFO, bounded), and the stress
// driver that runs a port many times and writes one trace per run.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../lanecheck_trace.hpp"

// -DLANECHECK_BUG=lost_wakeup or -DLANECHECK_BUG=drop_on_stop builds a seeded-bug copy.
#define LANECHECK_BUG_none 0
#define LANECHECK_BUG_lost_wakeup 1
#define LANECHECK_BUG_drop_on_stop 2
#define LANECHECK_CAT2(a, b) a##b
#define LANECHECK_CAT(a, b) LANECHECK_CAT2(a, b)
#ifndef LANECHECK_BUG
#define LANECHECK_BUG none
#endif
#define LANECHECK_STR2(x) #x
#define LANECHECK_STR(x) LANECHECK_STR2(x)

namespace example {

// An unknown name expands to an undeclared identifier here: a compile error, not a silent no-bug.
constexpr int kBug = LANECHECK_CAT(LANECHECK_BUG_, LANECHECK_BUG);
constexpr bool kLostWakeupBug = kBug == LANECHECK_BUG_lost_wakeup;
constexpr bool kDropOnStopBug = kBug == LANECHECK_BUG_drop_on_stop;
constexpr const char* kBugName = LANECHECK_STR(LANECHECK_BUG);

// The ToolKit's result codes (TK_SUCCESS and the refusals).
enum class Result { Success, InvalidArgument, CapacityExceeded, InvalidState };
enum class StopMode { Drain, Discard };
inline const char* mode_name(StopMode m) { return m == StopMode::Drain ? "drain" : "discard"; }

struct Config {
    int lanes = 2;
    int workers = 2;
    int lane_capacity = 4;
    int max_per_drain = 2;
    int ready_capacity = 2;  // >= lanes: one reservation per lane, so a submit never fails

    lanecheck::Fields fields() const {
        lanecheck::Fields f;
        f.num("lanes", lanes).num("workers", workers).num("lane_capacity", lane_capacity);
        f.num("max_per_drain", max_per_drain).num("ready_capacity", ready_capacity);
        return f;
    }
};

// An item: an id for the driver's bookkeeping and the label the trace names it by.
struct Item {
    int id = -1;
    std::string label;
};

// Widens the windows between atomic steps (the places a lost wakeup hides) by yielding now
// and then; used at the same places in the correct ports and the bug copies.
inline void stress_point() {
    thread_local std::minstd_rand rng(std::random_device{}());
    const unsigned r = rng() % 16;
    if (r < 3) std::this_thread::yield();
    else if (r == 3) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

[[noreturn]] inline void broken(const std::string& what) {
    std::fprintf(stderr, "broken invariant: %s\n", what.c_str());
    std::abort();
}

// The Worker Pool: a bounded FIFO of work items (a work item is a lane number: the callback
// is always the scheduler's DrainLane) and the worker threads that run them. One mutex; a
// work item runs outside it. Trace events `submit` and `take` are emitted under the mutex,
// where the ready queue changes.
template <class Tr>
class ReadyPool {
public:
    using Log = typename Tr::Thread;

    ReadyPool(Tr& tracer, int capacity) : tracer_(tracer), capacity_(capacity) {}

    // Starts `workers` threads named w0, w1, ...; each runs run(lane, log) per work item.
    void start(int workers, std::function<void(int, Log&)> run) {
        run_ = std::move(run);
        for (int i = 0; i < workers; ++i) {
            Log& log = tracer_.thread("w" + std::to_string(i));
            threads_.emplace_back([this, &log] { work(log); });
        }
    }

    // Appends a work item (the thread owed it: a post that won the lane, or a drainer). A full
    // ready queue means a lane was submitted twice: a broken invariant, not a refusal.
    // `owed_by_post` counts the submissions Stop waits for (the lock-based design).
    void submit(int lane, Log& log, bool owed_by_post = false) {
        std::lock_guard<std::mutex> g(m_);
        enqueue(lane, log);
        if (owed_by_post) {
            ++owed_submitted_;
            quiet_cv_.notify_all();
        }
    }

    // A worker's resubmission in the lock-free design: refused once Stop(discard) began.
    bool offer(int lane, Log& log) {
        std::lock_guard<std::mutex> g(m_);
        if (refusing_) {
            log.emit("submit_refused", [&](lanecheck::Fields& f) { f.num("lane", lane); });
            return false;
        }
        enqueue(lane, log);
        return true;
    }

    // Runs `then` under the pool mutex once `count` post-owed submissions have arrived.
    template <class Then>
    void wait_submissions(std::uint64_t count, Then&& then) {
        std::unique_lock<std::mutex> g(m_);
        quiet_cv_.wait(g, [&] { return owed_submitted_ >= count; });
        then();
    }

    // Runs `then` under the pool mutex; from then on `offer` refuses when `refuse` is set.
    template <class Then>
    void locked(bool refuse, Then&& then) {
        std::lock_guard<std::mutex> g(m_);
        if (refuse) refusing_ = true;
        then();
    }

    // Blocks until the ready queue is empty and no worker holds a work item.
    void wait_quiescent() {
        std::unique_lock<std::mutex> g(m_);
        quiet_cv_.wait(g, [&] { return ready_.empty() && active_ == 0; });
    }

    // Workers exit once the queue is empty; joined here.
    void shutdown() { stop_workers(false); }

    // Workers exit after the work item they hold; what is queued is dropped (the drop bug).
    void quit_now() { stop_workers(true); }

    bool is_worker() const { return current_pool() == this; }

private:
    static const ReadyPool*& current_pool() {
        thread_local const ReadyPool* pool = nullptr;
        return pool;
    }

    void enqueue(int lane, Log& log) {
        log.emit("submit", [&](lanecheck::Fields& f) { f.num("lane", lane); });
        if (quit_) return;  // only the drop bug quits a pool early: its work items are destroyed
        if (static_cast<int>(ready_.size()) >= capacity_)
            broken("ready queue overflow: lane " + std::to_string(lane) + " was submitted twice");
        ready_.push_back(lane);
        work_cv_.notify_one();
    }

    void work(Log& log) {
        current_pool() = this;
        bool finished = false;
        for (;;) {
            int lane;
            {
                std::unique_lock<std::mutex> g(m_);
                if (finished) {
                    --active_;
                    if (ready_.empty() && active_ == 0) quiet_cv_.notify_all();
                }
                work_cv_.wait(g, [&] { return !ready_.empty() || shutdown_ || quit_; });
                if (quit_ || ready_.empty()) return;
                lane = ready_.front();
                ready_.pop_front();
                ++active_;
                log.emit("take", [&](lanecheck::Fields& f) { f.num("lane", lane); });
            }
            run_(lane, log);
            finished = true;
        }
    }

    void stop_workers(bool quit) {
        {
            std::lock_guard<std::mutex> g(m_);
            shutdown_ = true;
            if (quit) {
                quit_ = true;
                ready_.clear();
            }
            work_cv_.notify_all();
        }
        for (auto& t : threads_) t.join();
        threads_.clear();
    }

    Tr& tracer_;
    const int capacity_;
    std::function<void(int, Log&)> run_;
    std::vector<std::thread> threads_;
    std::mutex m_;
    std::condition_variable work_cv_, quiet_cv_;
    std::deque<int> ready_;
    int active_ = 0;
    std::uint64_t owed_submitted_ = 0;
    bool shutdown_ = false, quit_ = false, refusing_ = false;
};

// What one run observed, from the program's side (the driver's report).
struct RunStats {
    std::atomic<int> lost_wakeups{0};  // seeded bug: an end-of-drain decision that missed queued items
    std::atomic<int> stranded{0};      // items found in a lane after Stop(drain) saw the pool quiet
};

// What the stress driver gives a scheduler: its configuration, the tracer, the run's report
// and the two callbacks (invoke an item; an item Stop(discard) dropped).
template <class Tr>
struct Env {
    using Log = typename Tr::Thread;

    const Config cfg;
    Tr& tracer;
    RunStats& stats;
    std::function<void(const Item&, Log&)> invoke;
    std::function<void(const Item&)> discard;
};

// The scheduler's life, guarded by its state mutex.
enum class State { Running, Stopping, Stopped };

// Stop's first decision, under the state mutex: SUCCESS for a scheduler already stopped,
// INVALID_STATE (and its stop_rejected event) from a callback or while another Stop runs;
// otherwise the state is now Stopping and the caller goes on to close admission.
template <class Pool, class Log>
std::optional<Result> begin_stop(State& state, const Pool& pool, StopMode mode, Log& log) {
    if (state == State::Stopped) return Result::Success;
    const char* reason = pool.is_worker()           ? "in_callback"
                         : state == State::Stopping ? "stop_in_progress"
                                                    : nullptr;
    if (reason != nullptr) {
        log.emit("stop_rejected", [&](lanecheck::Fields& f) { f.str("mode", mode_name(mode)).str("reason", reason); });
        return Result::InvalidState;
    }
    state = State::Stopping;
    return std::nullopt;
}

// Stop's last step, under the state mutex: Stopped, the mode that stopped it, its stop_end event.
template <class Log>
Result end_stop(std::mutex& state_m, State& state, std::string& stopped_mode, StopMode mode, Log& log) {
    std::lock_guard<std::mutex> g(state_m);
    state = State::Stopped;
    stopped_mode = mode_name(mode);
    log.emit("stop_end", [&](lanecheck::Fields& f) { f.str("mode", mode_name(mode)).str("result", "ok"); });
    return Result::Success;
}

// The trace labels of the items a lane's reset took out (its `discard` / `reset` event).
inline std::vector<std::string> labels_of(const std::vector<Item>& items) {
    std::vector<std::string> labels;
    for (const auto& item : items) labels.push_back(item.label);
    return labels;
}

// What Stop does with the items a lane's reset took out: in discard mode each is reported; in
// drain mode a lane is empty there, so items found were lost (stranded), never silently kept.
template <class Discard>
void answer_for(const std::vector<Item>& items, StopMode mode, const Discard& discard, RunStats& stats) {
    if (mode == StopMode::Discard) {
        for (const auto& item : items) discard(item);
    } else {
        stats.stranded.fetch_add(static_cast<int>(items.size()));
    }
}

// The stress driver. `Scheduler<Tr>` has:
//   explicit Scheduler(Env<Tr>)
//   Result try_post(int lane, Item&, Log&)   (moves the item only when it is accepted)
//   Result stop(StopMode, Log&)
//   static Log* worker_log()                 (the calling worker's log, for Stop from a callback)
// Usage: prog OUT_DIR [RUNS] [SEED] [mixed|drain]
template <template <class> class Scheduler>
int run_stress(int argc, char** argv, const char* design, int version) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR [RUNS] [SEED] [mixed|drain]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const int runs = argc > 2 ? std::atoi(argv[2]) : 30;
    const unsigned seed = argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)) : 1;
    const bool drain_only = argc > 4 && std::string(argv[4]) == "drain";
    // Labels that exercise the tracer's escaping (quotes, backslash, control characters,
    // non-ASCII, an invalid UTF-8 byte); the prefix keeps every label unique.
    const char* suffixes[] = {"", "\"q\"", "\\", "\xC3\xA9", "\t\n", "\x01", "\xFF"};
    using Tr = lanecheck::TraceFile;
    using Log = Tr::Thread;
    using Sched = Scheduler<Tr>;
    for (int run = 0; run < runs; ++run) {
        std::mt19937 rng(seed * 1000003u + static_cast<unsigned>(run));
        Config cfg;
        cfg.lanes = 1 + static_cast<int>(rng() % 2);
        cfg.workers = 2;
        cfg.lane_capacity = 2 + static_cast<int>(rng() % 3);
        cfg.max_per_drain = 1 + static_cast<int>(rng() % 2);
        cfg.ready_capacity = cfg.lanes;
        const int producers = 3, per_producer = 16, stoppers = 2;
        char name[64];
        std::snprintf(name, sizeof name, "/run-%03d.jsonl", run);
        const std::string path = dir + name;
        Tr tracer(path, lanecheck::header(design, version, cfg.fields()));
        RunStats stats;
        const int total = producers * per_producer;
        std::vector<std::atomic<int>> invoked(total), discarded(total);
        std::vector<char> accepted(total, 0);
        Sched* self = nullptr;
        auto invoke = [&](const Item& item, Log& log) {
            invoked[item.id].fetch_add(1);
            // Now and then a callback calls Stop: it must be refused (it would wait for itself).
            if (item.id % 13 == 5 && self->stop(StopMode::Drain, log) != Result::InvalidState)
                broken("Stop from a callback was not refused");
        };
        auto discard = [&](const Item& item) { discarded[item.id].fetch_add(1); };
        Log& main_log = tracer.thread("main");
        std::vector<Log*> logs;
        for (int p = 0; p < producers; ++p) logs.push_back(&tracer.thread("p" + std::to_string(p)));
        for (int s = 0; s < stoppers; ++s) logs.push_back(&tracer.thread("s" + std::to_string(s)));
        std::string winner_mode = "drain";
        {
            Sched sched(Env<Tr>{cfg, tracer, stats, invoke, discard});
            self = &sched;
            std::vector<std::thread> threads;
            for (int p = 0; p < producers; ++p) {
                const unsigned pseed = static_cast<unsigned>(rng());
                threads.emplace_back([&, p, pseed] {
                    std::minstd_rand r(pseed);
                    for (int k = 0; k < per_producer; ++k) {
                        Item item;
                        item.id = p * per_producer + k;
                        item.label = "p" + std::to_string(p) + "-" + std::to_string(k) + suffixes[k % 7];
                        // One post in 16 names no lane: INVALID_ARGUMENT, the item stays here.
                        const int lane = r() % 16 == 0 ? -1 : static_cast<int>(r() % cfg.lanes);
                        if (sched.try_post(lane, item, *logs[p]) == Result::Success) accepted[item.id] = 1;
                        if (r() % 4 == 0) std::this_thread::yield();
                    }
                });
            }
            std::vector<int> stopper_modes;
            for (int s = 0; s < stoppers; ++s) {
                const StopMode mode = drain_only || rng() % 2 ? StopMode::Drain : StopMode::Discard;
                const int delay_us = static_cast<int>(rng() % 400);
                threads.emplace_back([&, s, mode, delay_us] {
                    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
                    sched.stop(mode, *logs[producers + s]);
                });
            }
            for (auto& t : threads) t.join();
            // Whatever the stoppers did, the run ends stopped (SUCCESS if already stopped).
            if (sched.stop(StopMode::Drain, main_log) != Result::Success) broken("final Stop failed");
            winner_mode = sched.stopped_mode();
        }
        if (!tracer.finish()) {
            std::fprintf(stderr, "trace %s: %s\n", path.c_str(), tracer.error().c_str());
            return 1;
        }
        int n_accepted = 0, n_invoked = 0, n_discarded = 0, dropped = 0, duplicated = 0;
        for (int id = 0; id < total; ++id) {
            const int inv = invoked[id].load(), dis = discarded[id].load();
            n_accepted += accepted[id];
            n_invoked += inv;
            n_discarded += dis;
            if (inv + dis > 1 || (!accepted[id] && inv + dis > 0)) ++duplicated;
            if (accepted[id] && inv + dis == 0) ++dropped;
        }
        std::string trace_json;
        lanecheck::append_json_string(trace_json, path);
        std::printf(
            "{\"run\":%d,\"trace\":%s,\"bug\":\"%s\",\"stop_mode\":\"%s\",\"lanes\":%d,"
            "\"accepted\":%d,\"invoked\":%d,\"discarded\":%d,\"dropped\":%d,\"duplicated\":%d,"
            "\"lost_wakeups\":%d,\"stranded\":%d,\"events\":%llu}\n",
            run, trace_json.c_str(), kBugName, winner_mode.c_str(), cfg.lanes, n_accepted, n_invoked,
            n_discarded, dropped, duplicated, stats.lost_wakeups.load(), stats.stranded.load(),
            static_cast<unsigned long long>(tracer.events()));
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace example
