// The seed's lock-based Work Lane (seeds.md "000", docs/work-lane-spec.md), as a port would
// write it in C++17, traced in format v1 (design "work-lane").
//
// A lane is a bounded queue plus Idle | Scheduled | Draining, all guarded by the lane mutex.
// TryPost publishes and takes the Idle -> Scheduled decision under that mutex and submits the
// drain work item after leaving it. A drain sets Draining under the mutex, pops and invokes
// up to the budget, and decides Idle or resubmit under the mutex again. Each v1 event is
// emitted inside the critical section that makes its step atomic (docs/ports.md).
//
// Seeded bugs (-DLANECHECK_BUG=...):
//   lost_wakeup   the end-of-drain decision trusts the drainer's last pop: if that pop found
//                 the queue empty it goes Idle without looking again, missing an item posted
//                 in between (the report counts each such decision that missed an item).
//   drop_on_stop  Stop(drain) does not wait for the workers to finish: it makes them quit
//                 after their current work item and destroys what is queued, unreported.
//
//   g++ -O2 -std=c++17 -pthread work_lane_locked.cpp -o locked && ./locked OUT_DIR [RUNS] [SEED]
#include "example_common.hpp"

namespace example {

enum class LaneState { Idle, Scheduled, Draining };

template <class Tr>
class LockedScheduler {
public:
    using Log = typename Tr::Thread;

    explicit LockedScheduler(Env<Tr> env)
        : env_(std::move(env)), lanes_(env_.cfg.lanes), pool_(env_.tracer, env_.cfg.ready_capacity) {
        pool_.start(env_.cfg.workers, [this](int lane, Log& log) {
            if (drain(lanes_[lane], lane, log)) pool_.submit(lane, log);
        });
    }

    ~LockedScheduler() {
        if (state_ != State::Stopped) pool_.shutdown();
    }

    Result try_post(int index, Item& item, Log& log) {
        if (index < 0 || index >= env_.cfg.lanes) {
            log.emit("post", [&](lanecheck::Fields& f) {
                f.null("lane").str("item", item.label).str("result", "invalid_argument").flag("submit", false);
            });
            return Result::InvalidArgument;
        }
        Lane& lane = lanes_[index];
        bool submit = false;
        {
            std::lock_guard<std::mutex> g(lane.m);
            const char* refusal = !lane.open                                   ? "invalid_state"
                                  : static_cast<int>(lane.q.size()) >= env_.cfg.lane_capacity ? "capacity_exceeded"
                                                                               : nullptr;
            if (refusal != nullptr) {
                log.emit("post", [&](lanecheck::Fields& f) {
                    f.num("lane", index).str("item", item.label).str("result", refusal).flag("submit", false);
                });
                return lane.open ? Result::CapacityExceeded : Result::InvalidState;
            }
            submit = lane.state == LaneState::Idle;
            if (submit) {
                lane.state = LaneState::Scheduled;
                ++lane.posts_reserved;
            }
            log.emit("post", [&](lanecheck::Fields& f) {
                f.num("lane", index).str("item", item.label).str("result", "ok").flag("submit", submit);
            });
            lane.q.push_back(std::move(item));
        }
        // The owed submission, outside the lane mutex (the pool's mutex is never taken inside it).
        if (submit) pool_.submit(index, log, true);
        return Result::Success;
    }

    Result stop(StopMode mode, Log& log) {
        std::uint64_t owed = 0;
        {
            std::lock_guard<std::mutex> g(state_m_);
            if (const auto refused = begin_stop(state_, pool_, mode, log)) return *refused;
            // Every lane mutex at once, so each post is wholly before the close or sees it.
            std::vector<std::unique_lock<std::mutex>> held;
            for (auto& lane : lanes_) held.emplace_back(lane.m);
            for (auto& lane : lanes_) {
                lane.open = false;
                owed += lane.posts_reserved;
            }
        }
        // stop_begin once every accepted post has made its owed submission: under the pool
        // mutex that saw the last of them, so it is numbered after each.
        // Stop(discard) takes effect here, not when admission closed: its flag is raised with
        // every lane mutex held, so each drain's decision (under its lane's) is wholly before
        // both the flag and the event or after both, and no worker takes a work item between
        // them (takes hold the pool mutex; a lane mutex is taken inside it, never around it).
        pool_.wait_submissions(owed, [&] {
            std::vector<std::unique_lock<std::mutex>> held;
            if (mode == StopMode::Discard) {
                for (auto& lane : lanes_) held.emplace_back(lane.m);
                discarding_ = true;
            }
            log.emit("stop_begin", [&](lanecheck::Fields& f) { f.str("mode", mode_name(mode)); });
        });
        if (kDropOnStopBug && mode == StopMode::Drain) {
            // BUG: no wait for the drains; queued work and items are destroyed unreported.
            pool_.quit_now();
            for (auto& lane : lanes_) {
                std::lock_guard<std::mutex> g(lane.m);
                lane.q.clear();
                lane.state = LaneState::Idle;
            }
        } else {
            // Lanes are Scheduled only while their work item is queued or held by a worker, so
            // a quiet pool means: drain, every accepted item ran; discard, no drain runs or will.
            pool_.wait_quiescent();
            pool_.shutdown();
            for (int i = 0; i < env_.cfg.lanes; ++i) settle_lane(lanes_[i], i, mode, log);
        }
        return end_stop(state_m_, state_, stopped_mode_, mode, log);
    }

    std::string stopped_mode() const { return stopped_mode_; }

private:

    struct Lane {
        std::mutex m;
        std::deque<Item> q;  // at most lane_capacity items
        LaneState state = LaneState::Idle;
        bool open = true;
        std::uint64_t posts_reserved = 0;  // submissions posts have owed, ever
    };

    // One drain of up to the budget; true when the lane must be resubmitted.
    bool drain(Lane& lane, int index, Log& log) {
        {
            std::lock_guard<std::mutex> g(lane.m);
            // Once Stop(discard) has begun (stop_begin) no drain begins: Stop resets the lane.
            if (discarding_) return false;
            if (lane.state != LaneState::Scheduled) broken("drain of a lane that is not Scheduled");
            lane.state = LaneState::Draining;
            log.emit("drain_begin", [&](lanecheck::Fields& f) { f.num("lane", index); });
        }
        int invoked = 0;
        bool last_pop_empty = false;
        while (invoked < env_.cfg.max_per_drain) {
            Item item;
            {
                std::lock_guard<std::mutex> g(lane.m);
                if (lane.q.empty()) {
                    last_pop_empty = true;
                    break;
                }
                item = std::move(lane.q.front());
                lane.q.pop_front();
            }
            // After the pop (which a later-numbered post may already see as free room).
            log.emit("invoke", [&](lanecheck::Fields& f) { f.num("lane", index).str("item", item.label); });
            env_.invoke(item, log);
            ++invoked;
        }
        stress_point();
        std::lock_guard<std::mutex> g(lane.m);
        // Decided under the mutex: a concurrent post either is seen here or sees Idle and
        // submits the lane itself.
        bool resubmit = !lane.q.empty();
        if (kLostWakeupBug && last_pop_empty) {
            // BUG: "the last pop found nothing, so there is nothing" (stale).
            if (resubmit) env_.stats.lost_wakeups.fetch_add(1);
            resubmit = false;
        }
        lane.state = resubmit ? LaneState::Scheduled : LaneState::Idle;
        log.emit("drain_end", [&](lanecheck::Fields& f) {
            f.num("lane", index).str("outcome", resubmit ? "resubmit" : "idle").num("invoked", invoked);
        });
        return resubmit;
    }

    // After the workers are joined: discard mode reports what is queued; drain mode finds
    // nothing (a lane with items here was lost: counted as stranded, never silently kept).
    void settle_lane(Lane& lane, int index, StopMode mode, Log& log) {
        std::vector<Item> items;
        {
            std::lock_guard<std::mutex> g(lane.m);
            for (auto& item : lane.q) items.push_back(std::move(item));
            lane.q.clear();
            lane.state = LaneState::Idle;
            if (mode == StopMode::Discard && !items.empty()) {
                const auto labels = labels_of(items);
                log.emit("discard", [&](lanecheck::Fields& f) { f.num("lane", index).strs("items", labels); });
            }
        }
        answer_for(items, mode, env_.discard, env_.stats);
    }

    const Env<Tr> env_;
    std::vector<Lane> lanes_;
    ReadyPool<Tr> pool_;
    std::mutex state_m_;
    State state_ = State::Running;
    bool discarding_ = false;  // written holding every lane mutex, read holding one
    std::string stopped_mode_;
};

}  // namespace example

int main(int argc, char** argv) {
    return example::run_stress<example::LockedScheduler>(argc, argv, "work-lane", 1);
}
