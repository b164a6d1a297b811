// The ToolKit's lock-free Work Lane (seeds.md "Beyond the seed", docs/work-lane-lockfree.md)
// as a port would write it in C++17, traced in format v2 (design "work-lane-lockfree",
// docs/trace-format.md): one event per atomic step.
//
// No lane mutex: the lane state Idle | Scheduled | Draining is one std::atomic<int> changed by
// CAS, and the lane queue is a bounded MPMC queue (Vyukov's). A post is *push, then CAS
// Idle -> Scheduled* (the winner submits); a drain is *CAS Scheduled -> Draining, pop and
// invoke up to the budget, CAS Draining -> Idle, re-check the queue, CAS Idle -> Scheduled*
// (the winner resubmits). Stop closes admission (an atomic word: CLOSED bit + posts in
// flight), waits for the posts in flight, and in discard mode refuses resubmissions from
// `stop_begin` on and resets each lane, reporting what it destroys.
//
// Tracing: every atomic step whose outcome the trace shows runs in `tracer.step(...)`, which
// makes the step and its `seq` one indivisible moment (lanecheck_trace.hpp). That also makes
// each queue operation one step when traced, so the trace sees a linearizable queue;
// untraced (NullTracer), step(f) is f() and nothing is serialised.
//
// Seeded bugs (-DLANECHECK_BUG=...):
//   lost_wakeup   the re-check after Draining -> Idle trusts the drainer's last pop: if that pop
//                 found the queue empty it reports "empty" without looking, missing an item
//                 pushed in between whose producer's CAS lost to Draining (the report counts
//                 each re-check that said empty while the queue held items).
//   drop_on_stop  Stop(drain) waits neither for posts in flight nor for the workers: they quit
//                 after their current work item, and the lanes are reset unreported.
//
//   g++ -O2 -std=c++17 -pthread work_lane_lockfree.cpp -o lockfree && ./lockfree OUT_DIR [RUNS] [SEED]
#include "example_common.hpp"

namespace example {

enum : int { kIdle = 0, kScheduled = 1, kDraining = 2 };
inline const char* state_name(int s) { return s == kIdle ? "idle" : s == kScheduled ? "scheduled" : "draining"; }

// Dmitry Vyukov's bounded MPMC queue (any capacity >= 1; an index modulo capacity rather than
// a mask). Each cell's sequence number says whose turn it is: a producer at position p may
// fill the cell when seq == p, a consumer may empty it when seq == p + 1.
template <class T>
class BoundedQueue {
public:
    explicit BoundedQueue(std::size_t capacity) : cells_(capacity), capacity_(capacity) {
        for (std::size_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
    }

    // Moves `value` in and returns true, or returns false (full) and leaves it with the caller.
    bool push(T& value) {
        std::size_t pos = tail_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos % capacity_];
            const std::size_t seq = cell.seq.load(std::memory_order_acquire);
            const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
            if (diff == 0) {
                if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    cell.value = std::move(value);
                    cell.seq.store(pos + 1, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;
            } else {
                pos = tail_.load(std::memory_order_relaxed);
            }
        }
    }

    bool pop(T& out) {
        std::size_t pos = head_.load(std::memory_order_relaxed);
        for (;;) {
            Cell& cell = cells_[pos % capacity_];
            const std::size_t seq = cell.seq.load(std::memory_order_acquire);
            const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
            if (diff == 0) {
                if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
                    out = std::move(cell.value);
                    cell.seq.store(pos + capacity_, std::memory_order_release);
                    return true;
                }
            } else if (diff < 0) {
                return false;
            } else {
                pos = head_.load(std::memory_order_relaxed);
            }
        }
    }

    // Claimed pushes minus claimed pops: counts a push being filled in as present, so a
    // re-check errs towards "items" (an empty drain at worst, never a lost item).
    bool empty() const {
        return tail_.load(std::memory_order_seq_cst) == head_.load(std::memory_order_seq_cst);
    }

private:
    struct Cell {
        std::atomic<std::size_t> seq{0};
        T value{};
    };
    std::vector<Cell> cells_;
    const std::size_t capacity_;
    alignas(64) std::atomic<std::size_t> tail_{0};
    alignas(64) std::atomic<std::size_t> head_{0};
};

template <class Tr>
class LockFreeScheduler {
public:
    using Log = typename Tr::Thread;

    explicit LockFreeScheduler(Env<Tr> env)
        : env_(std::move(env)), pool_(env_.tracer, env_.cfg.ready_capacity) {
        for (int i = 0; i < env_.cfg.lanes; ++i)
            lanes_.push_back(std::make_unique<Lane>(env_.cfg.lane_capacity));
        pool_.start(env_.cfg.workers, [this](int lane, Log& log) {
            if (drain(*lanes_[lane], lane, log)) pool_.offer(lane, log);
        });
    }

    ~LockFreeScheduler() {
        if (state_ != State::Stopped) pool_.shutdown();
    }

    Result try_post(int index, Item& item, Log& log) {
        if (index < 0 || index >= env_.cfg.lanes) {
            log.emit("post", [&](lanecheck::Fields& f) {
                f.null("lane").str("item", item.label).str("result", "invalid_argument");
            });
            return Result::InvalidArgument;
        }
        Lane& lane = *lanes_[index];
        const std::string label = item.label;  // the item moves into the queue at the push
        const bool admitted = env_.tracer.step([&] {
            std::uint64_t word = admission_.load();
            while (!(word & kClosed))
                if (admission_.compare_exchange_weak(word, word + kOnePost)) return true;
            log.emit("post", [&](lanecheck::Fields& f) {
                f.num("lane", index).str("item", label).str("result", "invalid_state");
            });
            return false;
        });
        if (!admitted) return Result::InvalidState;
        const bool pushed = env_.tracer.step([&] {
            const bool ok = lane.q.push(item);
            log.emit("push", [&](lanecheck::Fields& f) {
                f.num("lane", index).str("item", label).str("result", ok ? "ok" : "capacity_exceeded");
            });
            return ok;
        });
        if (pushed) {
            stress_point();
            // Pushing first is what makes this safe: a drainer that lets the lane go after our
            // push re-checks and sees the item; one that let it go before leaves Idle for us.
            if (cas(lane, index, kIdle, kScheduled, log)) pool_.submit(index, log);
        }
        leave();
        return pushed ? Result::Success : Result::CapacityExceeded;
    }

    Result stop(StopMode mode, Log& log) {
        {
            std::lock_guard<std::mutex> g(state_m_);
            if (const auto refused = begin_stop(state_, pool_, mode, log)) return *refused;
            env_.tracer.step([&] { admission_.fetch_add(kClosed); });
        }
        const bool drop_bug = kDropOnStopBug && mode == StopMode::Drain;
        if (!drop_bug) {
            std::unique_lock<std::mutex> g(settle_m_);
            settled_cv_.wait(g, [&] { return admission_.load() == kClosed; });
        }
        // Under the pool mutex: in discard mode resubmissions are refused from this event on.
        // Stop(discard) takes effect here, at its stop_begin, not when admission closed: the flag
        // and the event are one traced step, so a drain's "discarding?" check and its
        // Scheduled -> Draining CAS (one step too) are wholly before both or see the flag, and
        // no worker takes a work item between them (takes hold the pool mutex).
        pool_.locked(mode == StopMode::Discard, [&] {
            env_.tracer.step([&] {
                if (mode == StopMode::Discard) discarding_.store(true);
                log.emit("stop_begin", [&](lanecheck::Fields& f) { f.str("mode", mode_name(mode)); });
            });
        });
        if (drop_bug) {
            // BUG: no wait; the workers quit after their current item; the lanes are reset unreported.
            pool_.quit_now();
            for (auto& lane : lanes_) {
                Item item;
                while (lane->q.pop(item)) {
                }
                lane->word.store(kIdle);
            }
        } else {
            // Every post has settled, so a lane holds items only with its work item queued or
            // held by a worker: a quiet pool means every lane is Idle and empty (drain), or no
            // drain runs and none will begin (discard).
            pool_.wait_quiescent();
            pool_.shutdown();
            for (int i = 0; i < env_.cfg.lanes; ++i) reset(*lanes_[i], i, mode, log);
        }
        return end_stop(state_m_, state_, stopped_mode_, mode, log);
    }

    std::string stopped_mode() const { return stopped_mode_; }

private:
    static constexpr std::uint64_t kClosed = 1, kOnePost = 2;  // the admission word

    struct Lane {
        explicit Lane(int capacity) : q(static_cast<std::size_t>(capacity)) {}
        std::atomic<int> word{kIdle};
        BoundedQueue<Item> q;
    };

    // One CAS of a lane word, traced as the `cas` event (with what a failed CAS saw).
    bool cas(Lane& lane, int index, int from, int to, Log& log, int invoked = -1) {
        return env_.tracer.step([&] {
            int seen = from;
            const bool ok = lane.word.compare_exchange_strong(seen, to);
            log.emit("cas", [&](lanecheck::Fields& f) {
                f.num("lane", index).str("from", state_name(from)).str("to", state_name(to)).flag("ok", ok);
                if (!ok) f.str("saw", state_name(seen));
                if (invoked >= 0) f.num("invoked", invoked);
            });
            return ok;
        });
    }

    void leave() {
        if (admission_.fetch_sub(kOnePost) == (kClosed | kOnePost)) {
            // The last post in flight after admission closed: Stop may be waiting for it.
            std::lock_guard<std::mutex> g(settle_m_);
            settled_cv_.notify_all();
        }
    }

    // One drain; true when this worker won the lane back and owes its resubmission.
    bool drain(Lane& lane, int index, Log& log) {
        const bool begun = env_.tracer.step([&] {
            // Once Stop(discard) has begun (stop_begin) no drain begins: the reset reports the items.
            if (discarding_.load()) return false;
            int seen = kScheduled;
            // Only the reservation's holder makes this CAS, so it cannot lose.
            if (!lane.word.compare_exchange_strong(seen, kDraining)) broken("drain of a lane that is not Scheduled");
            log.emit("drain_begin", [&](lanecheck::Fields& f) { f.num("lane", index); });
            return true;
        });
        if (!begun) return false;
        int invoked = 0;
        bool last_pop_empty = false;
        while (invoked < env_.cfg.max_per_drain) {
            Item item;
            const bool popped = env_.tracer.step([&] {
                const bool ok = lane.q.pop(item);
                log.emit("pop", [&](lanecheck::Fields& f) {
                    f.num("lane", index);
                    if (ok) f.str("item", item.label);
                    else f.null("item");
                });
                return ok;
            });
            if (!popped) {
                last_pop_empty = true;
                break;
            }
            log.emit("invoke", [&](lanecheck::Fields& f) { f.num("lane", index).str("item", item.label); });
            env_.invoke(item, log);
            ++invoked;
        }
        stress_point();
        if (!cas(lane, index, kDraining, kIdle, log, invoked)) broken("drain end of a lane that is not Draining");
        stress_point();
        // From here a producer's CAS can win the lane; an item pushed before the release is
        // ours to see now, one pushed after it is its producer's to schedule.
        const bool items = env_.tracer.step([&] {
            bool seen = !lane.q.empty();
            if (kLostWakeupBug && last_pop_empty) {
                // BUG: "the last pop found nothing, so there is nothing" (stale).
                if (seen) env_.stats.lost_wakeups.fetch_add(1);
                seen = false;
            }
            log.emit("recheck", [&](lanecheck::Fields& f) { f.num("lane", index).flag("empty", !seen); });
            return seen;
        });
        return items && cas(lane, index, kIdle, kScheduled, log);
    }

    // After the workers are joined: take every item out, report it (discard mode), set Idle.
    // In drain mode a lane is empty here; items found are counted as stranded, not kept.
    void reset(Lane& lane, int index, StopMode mode, Log& log) {
        std::vector<Item> items;
        env_.tracer.step([&] {
            Item item;
            while (lane.q.pop(item)) items.push_back(std::move(item));
            if (mode == StopMode::Discard && !items.empty()) {
                const auto labels = labels_of(items);
                log.emit("reset", [&](lanecheck::Fields& f) { f.num("lane", index).strs("items", labels); });
            }
            lane.word.store(kIdle);
        });
        answer_for(items, mode, env_.discard, env_.stats);
    }

    const Env<Tr> env_;
    std::vector<std::unique_ptr<Lane>> lanes_;
    ReadyPool<Tr> pool_;
    std::atomic<std::uint64_t> admission_{0};
    std::atomic<bool> discarding_{false};
    std::mutex settle_m_;
    std::condition_variable settled_cv_;
    std::mutex state_m_;
    State state_ = State::Running;
    std::string stopped_mode_;
};

}  // namespace example

int main(int argc, char** argv) {
    return example::run_stress<example::LockFreeScheduler>(argc, argv, "work-lane-lockfree", 2);
}
