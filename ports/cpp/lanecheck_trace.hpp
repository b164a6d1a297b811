// lanecheck_trace.hpp: a header-only C++17 tracer that writes lanecheck traces (JSON Lines).
//
// The format is docs/trace-format.md: a header line, then one event per line, each with
// `seq` (the order in which the implementation linearised its steps), `thread`, `event` and
// the event's fields. `lanecheck validate` judges the file (docs/ports.md).
//
//   lanecheck::TraceFile trace("run.jsonl", lanecheck::header("work-lane", 1, config));
//   auto& log = trace.thread("p0");                    // once per OS thread
//   { std::lock_guard g(lane.mutex);                   // the step's critical section
//     ...the step...
//     log.emit("post", [&](lanecheck::Fields& f) { f.num("lane", 0).str("item", "a")... }); }
//   trace.finish();                                    // merge and write; check the result
//
// Where `seq` comes from, and why the order is right
// ---------------------------------------------------
// `emit` takes the next number from one atomic counter at the moment it is called. It must
// be called *at the step's linearisation point*:
//   * a step guarded by a mutex: inside the critical section. Two steps on the same object
//     are ordered by that mutex, and a thread that observes a step's effect does so by
//     taking the mutex after it, so it draws a larger number; numbers of steps on different
//     objects that nobody relates may come in either order, as the interleaving allows.
//   * a step that is one atomic operation (a CAS, an atomic load deciding something): a
//     counter fetched just before or after the CAS can be overtaken by another thread's
//     step on the same word, which would put an effect before its cause in the file. So
//     such steps run inside `trace.step(f)`: f (the atomic operation and its `emit`) runs
//     under the tracer's step lock, which makes "the CAS took effect" and "it drew its
//     number" one indivisible moment with respect to every other traced step. Every atomic
//     operation whose result the trace shows must be such a step. The lock serialises only
//     single steps, never a whole operation, so the windows between a post's push and its
//     CAS, or between a drainer's release and its re-check, stay open to other threads.
// Each thread appends its events to its own buffer (no shared write path, so the tracer
// adds no ordering of its own beyond the counter); `finish` merges the buffers by `seq` and
// writes the file. It checks that the numbers are exactly 1..N, so an event lost or emitted
// twice is an error here and not a malformed trace later.
//
// Zero cost when disabled: write the scheduler as a template on its tracer type and
// instantiate it with `NullTracer`, whose `thread`, `emit` and `step` are empty inline
// functions: the field-building lambdas are never called and compile away, and `step(f)` is
// just `f()`. Defining LANECHECK_TRACE=0 makes `lanecheck::DefaultTracer` the NullTracer.
//
// Strings are escaped per RFC 8259: `"`, `\` and control characters are escaped; valid UTF-8
// passes through; a byte that is not part of valid UTF-8 becomes U+FFFD, so the file is
// always UTF-8 and strict JSON whatever a label contains.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef LANECHECK_TRACE
#define LANECHECK_TRACE 1
#endif

namespace lanecheck {

// Appends `s` to `out` as a JSON string literal (with the quotes).
inline void append_json_string(std::string& out, std::string_view s) {
    static const char hex[] = "0123456789abcdef";
    out.push_back('"');
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
            ++i;
        } else if (c < 0x20) {
            switch (c) {
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    out += "\\u00";
                    out.push_back(hex[c >> 4]);
                    out.push_back(hex[c & 0xF]);
            }
            ++i;
        } else if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
        } else {
            // A UTF-8 sequence: copied when well-formed (no overlong form, no surrogate, at
            // most U+10FFFF), otherwise its first byte becomes U+FFFD and we go on after it.
            std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
            bool ok = len != 0 && c <= 0xF4 && i + len <= n;
            for (std::size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
            if (ok && len == 3) {
                const unsigned char d = p[i + 1];
                ok = !(c == 0xE0 && d < 0xA0) && !(c == 0xED && d >= 0xA0);
            }
            if (ok && len == 4) {
                const unsigned char d = p[i + 1];
                ok = !(c == 0xF0 && d < 0x90) && !(c == 0xF4 && d >= 0x90);
            }
            if (ok) {
                out.append(reinterpret_cast<const char*>(p + i), len);
                i += len;
            } else {
                out += "\xEF\xBF\xBD";
                ++i;
            }
        }
    }
    out.push_back('"');
}

// The members of one JSON object, built in order: `,"key":value` each. Keys are written as
// given (they are the format's field names); string values are escaped.
class Fields {
public:
    Fields& num(std::string_view key, std::int64_t value) {
        this->key(key);
        out_ += std::to_string(value);
        return *this;
    }
    Fields& flag(std::string_view key, bool value) {
        this->key(key);
        out_ += value ? "true" : "false";
        return *this;
    }
    Fields& str(std::string_view key, std::string_view value) {
        this->key(key);
        append_json_string(out_, value);
        return *this;
    }
    Fields& null(std::string_view key) {
        this->key(key);
        out_ += "null";
        return *this;
    }
    Fields& strs(std::string_view key, const std::vector<std::string>& values) {
        this->key(key);
        out_.push_back('[');
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i) out_.push_back(',');
            append_json_string(out_, values[i]);
        }
        out_.push_back(']');
        return *this;
    }
    // A value that is already JSON (a nested object, such as a header's `config`).
    Fields& raw(std::string_view key, std::string_view json) {
        this->key(key);
        out_ += json;
        return *this;
    }
    // The members, each preceded by a comma: ready to follow `{"seq":...` in an event.
    const std::string& members() const { return out_; }
    // The members as an object of their own.
    std::string object() const { return "{" + (out_.empty() ? out_ : out_.substr(1)) + "}"; }

private:
    void key(std::string_view k) {
        out_.push_back(',');
        append_json_string(out_, k);
        out_.push_back(':');
    }
    std::string out_;
};

// The header line: {"trace":"lanecheck","version":V,"design":D,"config":{...}}.
inline std::string header(std::string_view design, int version, const Fields& config) {
    Fields h;
    h.str("trace", "lanecheck").num("version", version).str("design", design).raw("config", config.object());
    return h.object();
}

// The enabled tracer: one trace file.
class TraceFile {
public:
    static constexpr bool enabled = true;

    // One OS thread's log. Get it once per thread (`TraceFile::thread`) and use it only
    // from that thread.
    class Thread {
    public:
        // Takes the next `seq` now (call it at the step's linearisation point), then lets
        // `fill(Fields&)` add the event's fields.
        template <class Fill>
        void emit(std::string_view event, Fill&& fill) {
            const std::uint64_t seq = owner_->counter_.fetch_add(1, std::memory_order_relaxed) + 1;
            Fields f;
            f.str("thread", name_).str("event", event);
            fill(f);
            lines_.emplace_back(seq, "{\"seq\":" + std::to_string(seq) + f.members() + "}");
        }
        void emit(std::string_view event) {
            emit(event, [](Fields&) {});
        }

    private:
        friend class TraceFile;
        Thread(TraceFile* owner, std::string name) : owner_(owner), name_(std::move(name)) {}
        TraceFile* owner_;
        std::string name_;
        std::vector<std::pair<std::uint64_t, std::string>> lines_;
    };

    TraceFile(std::string path, std::string header_line)
        : path_(std::move(path)), header_(std::move(header_line)) {}
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;

    // A log for a thread named `name` (unique per thread: the validator tells threads apart
    // by name). Logs live as long as the tracer.
    Thread& thread(std::string name) {
        std::lock_guard<std::mutex> guard(threads_mutex_);
        threads_.push_back(Thread(this, std::move(name)));
        return threads_.back();
    }

    // Runs `f` (one atomic step and its `emit`) as one indivisible traced step (see the top).
    template <class F>
    decltype(auto) step(F&& f) {
        std::lock_guard<std::mutex> guard(step_mutex_);
        return f();
    }

    // Merges every thread's events by `seq` and writes the file. Call it once every thread
    // that emits has been joined. Returns false, with `error()` saying why, if the file
    // cannot be written or the numbers are not exactly 1..N.
    bool finish() {
        std::vector<std::pair<std::uint64_t, std::string>> all;
        for (auto& t : threads_) {
            for (auto& line : t.lines_) all.push_back(std::move(line));
            t.lines_.clear();
        }
        std::sort(all.begin(), all.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (all[i].first != i + 1) {
                error_ = "seq " + std::to_string(i + 1) + " missing or repeated (found " +
                         std::to_string(all[i].first) + ")";
                return false;
            }
        }
        std::FILE* out = std::fopen(path_.c_str(), "wb");
        if (out == nullptr) {
            error_ = "cannot open " + path_ + " for writing";
            return false;
        }
        bool ok = std::fputs(header_.c_str(), out) >= 0 && std::fputc('\n', out) != EOF;
        for (const auto& line : all) {
            ok = ok && std::fwrite(line.second.data(), 1, line.second.size(), out) == line.second.size() &&
                 std::fputc('\n', out) != EOF;
        }
        ok = (std::fclose(out) == 0) && ok;
        if (!ok) error_ = "writing " + path_ + " failed";
        return ok;
    }

    const std::string& error() const { return error_; }
    std::uint64_t events() const { return counter_.load(); }

private:
    std::string path_;
    std::string header_;
    std::string error_;
    std::atomic<std::uint64_t> counter_{0};
    std::mutex threads_mutex_;
    std::deque<Thread> threads_;  // a deque: logs handed out keep their address
    std::mutex step_mutex_;
};

// The disabled tracer: same interface, nothing happens, nothing is computed.
class NullTracer {
public:
    static constexpr bool enabled = false;
    class Thread {
    public:
        template <class Fill>
        void emit(std::string_view, Fill&&) {}
        void emit(std::string_view) {}
    };
    Thread& thread(const std::string&) { return thread_; }
    template <class F>
    decltype(auto) step(F&& f) {
        return f();
    }
    bool finish() { return true; }
    const std::string& error() const { return error_; }

private:
    Thread thread_;
    std::string error_;
};

#if LANECHECK_TRACE
using DefaultTracer = TraceFile;
#else
using DefaultTracer = NullTracer;
#endif

}  // namespace lanecheck
