#include "cli_allocator.h"

#include "batchfit/estimate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace batchfit {

namespace {
using ojson = nlohmann::ordered_json;

std::string mib(std::uint64_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / 1048576.0);
    return buf;
}

ojson statsJson(const AllocatorStats& s) {
    ojson o;
    o["peak_allocated_bytes"] = s.peakAllocatedBytes;
    o["peak_reserved_bytes"] = s.peakReservedBytes;
    o["peak_requested_bytes"] = s.peakRequestedBytes;
    o["peak_inactive_split_bytes"] = s.peakInactiveSplitBytes;
    o["final_allocated_bytes"] = s.finalAllocatedBytes;
    o["final_reserved_bytes"] = s.finalReservedBytes;
    o["peak_segments"] = s.peakSegments;
    o["final_segments"] = s.finalSegments;
    o["device_allocs"] = s.deviceAllocs;
    o["device_frees"] = s.deviceFrees;
    o["alloc_retries"] = s.allocRetries;
    o["allocations"] = s.allocations;
    return o;
}
} // namespace

Result<std::string> allocatorReplayOutput(const CliOptions& o, bool& oomOut) {
    if (o.trace.empty()) return makeError("allocator-replay needs a trace file: allocator-replay TRACE");
    auto trace = loadAllocatorTrace(o.trace);
    if (!trace) return trace.error();
    ReplayOptions opt;
    std::string confText = o.allocConfGiven ? o.config.allocConf : trace->allocConf.value_or("");
    auto conf = parseAllocConf(confText);
    if (!conf)
        return makeError((o.allocConfGiven ? std::string("--alloc-conf") : o.trace + ": $.alloc_conf") +
                         ": " + conf.error().message);
    opt.config = *conf;
    const std::optional<std::uint64_t> capacity = o.capacity ? o.capacity : trace->deviceTotalBytes;
    const std::uint64_t context = o.config.cudaContextBytes.value_or(0);
    if (capacity) {
        opt.capacityBytes = *capacity;
        opt.contextBytes = context;
        opt.limitBytes = *capacity > context ? *capacity - context : 0;
    }
    opt.memoryFraction = o.memoryFraction;
    auto r = replayAllocations(trace->events, opt);
    if (!r) return makeError(o.trace + ": " + r.error().message);
    oomOut = r->oom.has_value();
    const auto& s = r->stats;
    const auto& rec = trace->recorded;
    auto fraction = [](std::uint64_t sim, std::uint64_t real) {
        return real ? (static_cast<double>(sim) - static_cast<double>(real)) / static_cast<double>(real)
                    : 0.0;
    };
    std::vector<std::uint64_t> simSizes;
    if (rec && rec->segmentSizes) {
        // The segments at the end: a second replay would be needed for a snapshot; the stats do not keep
        // sizes, so replay again asking for one.
        ReplayOptions again = opt;
        again.snapshotAfter = trace->events.empty() ? 0 : trace->events.size() - 1;
        auto snap = replayAllocations(trace->events, again);
        if (snap)
            for (const auto& seg : snap->segments) simSizes.push_back(seg.size);
        std::sort(simSizes.begin(), simSizes.end());
    }
    std::vector<std::uint64_t> recSizes =
        rec && rec->segmentSizes ? *rec->segmentSizes : std::vector<std::uint64_t>{};
    std::sort(recSizes.begin(), recSizes.end());

    if (o.json) {
        ojson j;
        j["trace"] = o.trace;
        j["alloc_conf"] = allocConfText(opt.config);
        j["capacity_bytes"] = capacity ? ojson(*capacity) : ojson(nullptr);
        j["events"] = trace->events.size();
        j["simulated"] = statsJson(s);
        if (r->oom) {
            ojson f;
            f["event_index"] = r->oom->eventIndex;
            f["id"] = r->oom->id;
            f["requested_bytes"] = r->oom->requestedBytes;
            f["tried_bytes"] = r->oom->triedBytes;
            f["allocated_bytes"] = r->oom->allocatedBytes;
            f["reserved_bytes"] = r->oom->reservedBytes;
            f["message"] = r->oom->message;
            j["oom"] = f;
        } else {
            j["oom"] = nullptr;
        }
        if (rec) {
            ojson rj, cmp;
            if (rec->peakAllocatedBytes) rj["peak_allocated_bytes"] = *rec->peakAllocatedBytes;
            if (rec->peakReservedBytes) {
                rj["peak_reserved_bytes"] = *rec->peakReservedBytes;
                cmp["peak_reserved_bytes"] = {
                    {"simulated", s.peakReservedBytes},
                    {"recorded", *rec->peakReservedBytes},
                    {"difference_fraction", fraction(s.peakReservedBytes, *rec->peakReservedBytes)}};
            }
            if (rec->segmentAllocs) {
                rj["segment_allocs"] = *rec->segmentAllocs;
                cmp["segment_allocs"] = {{"simulated", s.deviceAllocs}, {"recorded", *rec->segmentAllocs}};
            }
            if (rec->segmentFrees) rj["segment_frees"] = *rec->segmentFrees;
            if (rec->segmentSizes) {
                ojson segs = ojson::array();
                for (auto sz : *rec->segmentSizes) segs.push_back({{"size", sz}});
                rj["segments"] = segs;
                cmp["final_segments"] = {{"simulated", simSizes.size()}, {"recorded", recSizes.size()}};
                cmp["final_segment_sizes_match"] = simSizes == recSizes;
            }
            j["recorded"] = rj;
            j["comparison"] = cmp;
        } else {
            j["recorded"] = nullptr;
            j["comparison"] = nullptr;
        }
        return j.dump(2) + "\n";
    }
    std::ostringstream os;
    os << o.trace << ": " << trace->events.size() << " events, " << s.allocations
       << " allocations replayed\n";
    os << "allocator: " << (opt.config.isDefault() ? "torch 2.x defaults" : allocConfText(opt.config))
       << "\n";
    os << "simulated: peak allocated " << mib(s.peakAllocatedBytes) << ", peak reserved "
       << mib(s.peakReservedBytes) << ", peak inactive split " << mib(s.peakInactiveSplitBytes) << "\n";
    os << "           segments: " << s.peakSegments << " at most, " << s.finalSegments << " at the end; "
       << s.deviceAllocs << " cudaMalloc/map calls; emptied the cache and retried " << s.allocRetries
       << " times\n";
    if (rec) {
        os << "recorded:  ";
        if (rec->peakAllocatedBytes) os << "peak allocated " << mib(*rec->peakAllocatedBytes) << ", ";
        if (rec->peakReservedBytes) {
            char pct[32];
            std::snprintf(pct, sizeof pct, "%+.1f%%",
                          100 * fraction(s.peakReservedBytes, *rec->peakReservedBytes));
            os << "peak reserved " << mib(*rec->peakReservedBytes) << " (simulated " << pct << ")";
        }
        os << "\n";
        if (rec->segmentAllocs)
            os << "           segment allocations: " << *rec->segmentAllocs << " recorded, " << s.deviceAllocs
               << " simulated\n";
        if (rec->segmentSizes)
            os << "           segments at the end: " << recSizes.size() << " recorded, " << simSizes.size()
               << " simulated, sizes " << (simSizes == recSizes ? "match" : "differ") << "\n";
    }
    if (capacity) {
        os << "capacity " << mib(*capacity);
        if (context) os << " (" << mib(context) << " context)";
        if (r->oom)
            os << ": out of memory at event " << r->oom->eventIndex << " (id " << r->oom->id << ")\n  "
               << r->oom->message << "\n";
        else
            os << ": every allocation succeeds\n";
    }
    return os.str();
}

Status writeStepTrace(const CliOptions& o, const Estimator& est) {
    auto events = est.allocatorEvents(o.batch);
    if (!events) return events.error();
    AllocatorTrace t;
    t.events = std::move(*events);
    for (int c = 0; c < kComponentCount; ++c) t.tagNames.push_back(componentName(static_cast<Component>(c)));
    if (!est.config().allocConf.empty()) t.allocConf = est.config().allocConf;
    if (o.gpu) t.deviceTotalBytes = o.gpu->memoryBytes;
    const std::string tmp = o.traceOut + ".part";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return makeError("--trace-out: cannot write " + tmp);
        f << allocatorTraceJson(t);
        if (!f.flush()) return makeError("--trace-out: cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), o.traceOut.c_str()) != 0) {
        std::remove(tmp.c_str());
        return makeError("--trace-out: cannot rename " + tmp + " to " + o.traceOut);
    }
    return Ok{};
}

} // namespace batchfit
