#include "compare/saved.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

// The schema versions of bench and compare documents this build reads.
constexpr int kBenchSchemaMax = 2, kCompareSchemaMax = 2;

bool ends_with_json(const std::string& s) { return s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0; }

std::string stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') + 1);
  return ends_with_json(s) ? s.substr(0, s.size() - 5) : s;
}

std::optional<double> num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

const json& at(const json& j, const char* key) {
  static const json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

// A count: a non-negative integer however the JSON holds it.
std::optional<uint64_t> count(const json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return static_cast<uint64_t>(j.get<int64_t>());
  return std::nullopt;
}

// "a, b": appends with a separator (and spares GCC 12 a false -Wrestrict on
// const char* + std::string).
void join(std::string& s, const std::string& sep, const std::string& x) {
  if (!s.empty()) s += sep;
  s += x;
}

std::string text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_null()) return "none";
  return j.dump();
}

// A histogram rebuilt from [lo, hi, count] buckets: each count at its
// bucket's lower bound, which lands in the same bucket.
std::shared_ptr<Histogram> histogram_of(const json& buckets) {
  if (!buckets.is_array() || buckets.empty()) return nullptr;
  auto h = std::make_shared<Histogram>();
  for (const auto& b : buckets)
    if (b.is_array() && b.size() == 3 && count(b[0]) && count(b[2])) h->record_n(*count(b[0]), *count(b[2]));
  return h->count() ? h : nullptr;
}

std::string describe_options(const json& o) {
  if (!o.is_object()) return "";
  std::string d = fmt::format("{} {} {}, {}, depth {}", text(at(o, "rw")),
                              count(at(o, "bs")) ? format_size(*count(o["bs"])) : "?",
                              at(o, "direct") == true ? "O_DIRECT" : "buffered", text(at(o, "engine")), text(at(o, "iodepth")));
  if (at(o, "dsync") == true) d += ", O_DSYNC";
  if (at(at(o, "uring"), "sqpoll") == true) d += ", SQPOLL";
  if (auto r = num(o, "rate_iops_per_thread"); r && at(o, "threads").is_number())
    d += fmt::format(", paced at {} IOPS", format_count(*r * o["threads"].get<double>()));
  return d;
}

std::optional<double> rate_of(const json& o) {
  auto r = num(o, "rate_iops_per_thread");
  auto t = num(o, "threads");
  if (!r || !t) return std::nullopt;
  return *r * *t;
}

RunMetrics metrics_of_compare_run(const json& r) {
  RunMetrics m;
  m.iops = num(r, "iops").value_or(0);
  m.bytes_per_s = num(r, "bytes_per_s").value_or(0);
  m.ios = count(at(r, "ios")).value_or(0);
  m.cpu_per_io_ns = num(r, "cpu_per_io_ns");
  const json& split = at(r, "cpu_split_ns");
  m.cpu_submit_ns = num(split, "submitters");
  m.cpu_sq_ns = num(split, "sq_threads");
  m.cpu_iowq_ns = num(split, "io_wq");
  m.cpu_other_ns = num(split, "other");
  m.p50_ns = num(r, "p50_ns");
  m.p99_ns = num(r, "p99_ns");
  m.sq_work = num(r, "sq_work_fraction");
  m.util_pct = num(r, "util_pct");
  m.busy_pct = num(r, "busy_pct");
  return m;
}

// context.schema_version as a whole number; 0 when absent. Anything else
// (a string, a fraction, a number past any version) is named.
int schema_of(const std::string& path, const json& ctx) {
  const json& v = at(ctx, "schema_version");
  if (v.is_null()) return 0;
  if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 1000) return static_cast<int>(v.get<int64_t>());
  throw UsageError(fmt::format("{}: context.schema_version is {}, not a schema version (a whole number); the file is "
                               "damaged", path, v.dump()));
}

// The figures compare reads, checked for what no run can produce: a
// negative or absurd rate prints as "-1--1" or 300 digits, and a count that
// is not a count would silently read as 0. `where` names the object
// ("results", "variants[0].runs[2]").
void check_figures(const std::string& path, const std::string& where, const json& r) {
  if (!r.is_object()) return;
  auto bad = [&](const std::string& key, const json& v, const std::string& what) {
    throw UsageError(fmt::format("{}: {}.{} is {}, {}; the file is damaged", path, where, key, v.dump(), what));
  };
  // Rates and times, with bounds no device comes near: 10^12 IOPS, 1 PB/s.
  const std::pair<const char*, double> bounded[] = {
      {"iops", 1e12}, {"bytes_per_s", 1e15}, {"cpu_per_io_ns", 1e15}, {"p50_ns", 1e15}, {"p99_ns", 1e15},
      {"util_pct", 1e4}, {"busy_pct", 1e4}, {"p50", 1e15}, {"p99", 1e15}};
  for (const auto& [key, top] : bounded) {
    const json& v = at(r, key);
    if (v.is_null()) continue;
    if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > top)
      bad(key, v, fmt::format("not a figure a run can have (0 to {:g})", top));
  }
  for (const char* key : {"ios", "reads", "writes", "trims", "syncs", "bytes"}) {
    const json& v = at(r, key);
    if (!v.is_null() && !count(v)) bad(key, v, "not a count (a whole number from 0 to 2^64-1)");
  }
  const json& w = at(r, "window_s");
  if (!w.is_null() && (!w.is_number() || !(w.get<double>() > 0) || w.get<double>() > 1e9))
    bad("window_s", w, "not a run's length (more than 0 s)");
}

}  // namespace

bool are_saved_words(const std::vector<std::string>& words) {
  if (words.empty()) return false;
  for (const auto& w : words) {
    const size_t eq = w.find('=');
    const std::string files = eq == std::string::npos ? w : w.substr(eq + 1);
    if (!w.empty() && w[0] == '-') return false;
    size_t start = 0;
    while (true) {
      const size_t c = files.find(',', start);
      if (!ends_with_json(files.substr(start, c == std::string::npos ? std::string::npos : c - start))) return false;
      if (c == std::string::npos) break;
      start = c + 1;
    }
  }
  return true;
}

std::vector<SavedWord> parse_saved_words(const std::vector<std::string>& words) {
  std::vector<SavedWord> out;
  std::set<std::string> names;
  for (const auto& w : words) {
    SavedWord s;
    const size_t eq = w.find('=');
    std::string files = w;
    if (eq != std::string::npos) {
      s.name = w.substr(0, eq);
      files = w.substr(eq + 1);
      if (s.name.empty()) throw UsageError(fmt::format("{}: the variant has no name before '='", w));
      if (!names.insert(s.name).second) throw UsageError(fmt::format("{}: the name '{}' is given twice", w, s.name));
    }
    size_t start = 0;
    while (true) {
      const size_t c = files.find(',', start);
      s.files.push_back(files.substr(start, c == std::string::npos ? std::string::npos : c - start));
      if (s.files.back().empty()) throw UsageError(fmt::format("{}: an empty file name in its list", w));
      if (c == std::string::npos) break;
      start = c + 1;
    }
    out.push_back(std::move(s));
  }
  return out;
}

SavedDoc parse_saved(const std::string& path, const std::string& content) {
  SavedDoc d;
  d.path = path;
  // The parser would stop at a NUL and take what came before it whole.
  if (const size_t nul = content.find('\0'); nul != std::string::npos)
    throw UsageError(fmt::format("{}: not valid JSON: a NUL byte at offset {}", path, nul));
  try {
    d.root = std::make_shared<const json>(json::parse(content));
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, ..." without
    // its tag; out_of_range.406 is a number past a double (1e400).
    std::string what = e.what();
    if (const size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw UsageError(fmt::format("{}: not valid JSON: {}", path, what));
  }
  const json& ctx = at(d.doc(), "context");
  if (!at(ctx, "ioacct_version").is_string())
    throw UsageError(fmt::format("{}: not an ioacct bench or compare JSON document (it has no context.ioacct_version); "
                                 "give files written by 'ioacct bench --format json' or 'ioacct compare --format json'", path));
  const int schema = schema_of(path, ctx);
  if (at(d.doc(), "variants").is_array()) {
    d.kind = SavedDoc::Kind::Compare;
    if (schema < 1 || schema > kCompareSchemaMax)
      throw UsageError(fmt::format("{}: compare schema_version {} is not one this ioacct reads (1 to {}); compare it "
                                   "with the ioacct that wrote it", path, schema, kCompareSchemaMax));
    size_t i = 0;
    for (const auto& v : d.doc()["variants"]) {
      if (!at(v, "name").is_string() || !at(v, "runs").is_array())
        throw UsageError(fmt::format("{}: a variant without a name or runs; the file is damaged", path));
      size_t k = 0;
      for (const auto& r : v["runs"]) check_figures(path, fmt::format("variants[{}].runs[{}]", i, k++), r);
      ++i;
    }
    return d;
  }
  if (!ctx.contains("options")) throw UsageError(fmt::format("{}: an ioacct document, but neither a bench nor a compare one "
                                                            "(give 'ioacct bench' or 'ioacct compare' JSON)", path));
  d.kind = SavedDoc::Kind::Bench;
  if (schema < 1 || schema > kBenchSchemaMax)
    throw UsageError(fmt::format("{}: bench schema_version {} is not one this ioacct reads (1 to {}); compare it with "
                                 "the ioacct that wrote it", path, schema, kBenchSchemaMax));
  if (!at(d.doc(), "results").is_object())
    throw UsageError(fmt::format("{}: holds no results (the run was interrupted before it started)", path));
  if (!num(d.doc()["results"], "iops")) throw UsageError(fmt::format("{}: results.iops is missing; the file is damaged", path));
  check_figures(path, "results", d.doc()["results"]);
  check_figures(path, "results.latency_ns", at(d.doc()["results"], "latency_ns"));
  return d;
}

RunMetrics metrics_of_bench(const json& doc) {
  const json& r = at(doc, "results");
  RunMetrics m;
  m.iops = num(r, "iops").value_or(0);
  m.bytes_per_s = num(r, "bytes_per_s").value_or(0);
  m.ios = count(at(r, "ios")).value_or(0);
  const json& b = at(at(r, "cpu"), "breakdown");
  if (m.ios && b.is_object()) {
    const double n = static_cast<double>(m.ios);
    auto per_io = [&](const char* k) -> std::optional<double> {
      auto s = num(b, k);
      return s ? std::optional<double>(*s * 1e9 / n) : std::nullopt;
    };
    m.cpu_per_io_ns = per_io("total_s");
    m.cpu_submit_ns = per_io("submitters_s");
    m.cpu_sq_ns = per_io("sq_threads_s");
    m.cpu_iowq_ns = per_io("iowq_s");
    m.cpu_other_ns = per_io("other_s");
  }
  const json& lat = at(r, "latency_ns");
  m.p50_ns = num(lat, "p50");
  m.p99_ns = num(lat, "p99");
  if (at(r, "sq_threads").is_array() && !r["sq_threads"].empty()) {
    double cpu = 0, work = 0;
    bool all = true;
    for (const auto& t : r["sq_threads"]) {
      cpu += num(t, "cpu_s").value_or(0);
      if (auto w = num(t, "work_s")) work += *w;
      else all = false;
    }
    if (all) m.sq_work = sq_work_ratio(work, cpu);
  }
  if (at(r, "devices").is_array())
    for (const auto& d : r["devices"])
      if (at(d, "role") == "target") {
        m.util_pct = num(d, "util_pct");
        m.busy_pct = num(d, "busy_pct");
        break;
      }
  m.latency = histogram_of(at(r, "latency_histogram_ns"));
  return m;
}

SavedCompare saved_compare(const std::vector<SavedWord>& words, const std::vector<std::vector<SavedDoc>>& docs) {
  SavedCompare s;
  CompareResult& c = s.result;
  std::vector<SavedDoc> all;
  for (const auto& g : docs) all.insert(all.end(), g.begin(), g.end());
  if (all.empty()) return s;
  s.context = std::make_shared<const json>(at(all.front().doc(), "context"));
  for (size_t i = 0; i < words.size() && i < docs.size(); ++i) {
    const SavedWord& w = words[i];
    if (!w.name.empty()) {
      VariantSummary v;
      v.name = w.name;
      for (const auto& d : docs[i]) {
        if (d.kind != SavedDoc::Kind::Bench)
          throw UsageError(fmt::format("{}={}: {} is a compare document; a NAME= list takes bench runs, one repetition each",
                                       w.name, d.path, d.path));
        v.runs.push_back(metrics_of_bench(d.doc()));
        v.sources.push_back(d.path);
        if (!v.options) v.options = std::make_shared<const json>(at(d.doc()["context"], "options"));
      }
      v.description = describe_options(*v.options);
      v.rate_iops = rate_of(*v.options);
      v.engine_desc = text(at(docs[i].front().doc()["context"], "engine_description"));
      c.variants.push_back(std::move(v));
      continue;
    }
    const SavedDoc& d = docs[i].front();
    if (d.kind == SavedDoc::Kind::Bench) {
      VariantSummary v;
      v.name = stem(d.path);
      v.runs.push_back(metrics_of_bench(d.doc()));
      v.sources.push_back(d.path);
      v.options = std::make_shared<const json>(at(d.doc()["context"], "options"));
      v.description = describe_options(*v.options);
      v.rate_iops = rate_of(*v.options);
      v.engine_desc = text(at(d.doc()["context"], "engine_description"));
      c.variants.push_back(std::move(v));
      continue;
    }
    // A compare document: its variants as they were, prefixed with the file's
    // name when other files are compared beside it.
    const bool alone = all.size() == 1;
    const json& ctx = d.doc()["context"];
    if (alone) {
      if (at(ctx, "preset").is_string()) c.preset = ctx["preset"];
      if (at(ctx, "question").is_string()) c.question = ctx["question"];
      if (at(ctx, "explanation").is_string()) c.explanation = ctx["explanation"];
      if (auto m = num(at(ctx, "verdict_rule"), "margin")) c.rule.margin = *m;
    }
    for (const auto& jv : d.doc()["variants"]) {
      VariantSummary v;
      v.name = alone ? jv["name"].get<std::string>() : stem(d.path) + "/" + jv["name"].get<std::string>();
      if (at(jv, "args").is_array())
        for (const auto& a : jv["args"])
          if (a.is_string()) v.args.push_back(a);
      v.description = text(at(jv, "description"));
      v.engine_desc = text(at(jv, "engine_description"));
      v.rate_iops = num(jv, "rate_iops");
      v.options = std::make_shared<const json>(at(jv, "options"));
      v.sources.push_back(d.path);
      for (const auto& r : jv["runs"]) v.runs.push_back(metrics_of_compare_run(r));
      // Per-run histograms are not saved; the variant's merged one rides on
      // its first run, so that merging the runs gives it back.
      if (!v.runs.empty()) v.runs.front().latency = histogram_of(at(jv, "latency_histogram_ns"));
      if (alone && at(jv, "baseline") == true) c.baseline = c.variants.size();
      c.variants.push_back(std::move(v));
    }
  }
  std::set<std::string> names;
  for (const auto& v : c.variants)
    if (!names.insert(v.name).second)
      throw UsageError(fmt::format("two variants are named '{}'; name them apart with NAME=FILE.json", v.name));
  for (const auto& v : c.variants) c.repeat = std::max(c.repeat, static_cast<unsigned>(v.runs.size()));
  // Files take no --repeat: the advice says how their kind gets more runs.
  for (const auto& d : all) (d.kind == SavedDoc::Kind::Bench ? c.rule.more.saved_bench : c.rule.more.saved_compare) = true;
  s.warnings = context_warnings(all);
  return s;
}

std::vector<std::string> context_warnings(const std::vector<SavedDoc>& docs) {
  std::vector<std::string> out;
  if (docs.size() < 2) return out;
  // One value per document; "differs" lists each distinct value with its files.
  auto differs = [&](const std::string& what, const std::function<std::string(const SavedDoc&)>& get, const std::string& todo) {
    std::map<std::string, std::vector<std::string>> by;
    for (const auto& d : docs) by[get(d)].push_back(d.path);
    if (by.size() < 2) return;
    std::string list;
    for (const auto& [value, files] : by) {
      std::string f;
      for (const auto& x : files) join(f, ", ", x);
      join(list, "; ", fmt::format("'{}' in {}", value, f));
    }
    out.push_back(fmt::format("warning: the files ran on different {}: {}; {}", what, list, todo));
  };
  auto ctx = [](const SavedDoc& d) -> const json& { return d.doc()["context"]; };
  differs("kernels", [&](const SavedDoc& d) { return text(at(ctx(d), "kernel")); },
          "a kernel change can move every figure, so read the ratios as kernel against kernel");
  differs("hosts", [&](const SavedDoc& d) { return text(at(ctx(d), "host")); },
          "figures from different machines compare the machines too");
  differs("ioacct versions", [&](const SavedDoc& d) { return text(at(ctx(d), "ioacct_version")); },
          "check the release notes for changes in how a figure is measured");
  differs("devices", [&](const SavedDoc& d) {
    std::string s;
    if (at(ctx(d), "targets").is_array())
      for (const auto& t : ctx(d)["targets"]) {
        const json& id = at(t, "device_identity");
        join(s, ", ", text(at(t, "device")));
        if (id.is_object()) s += fmt::format(" ({}, firmware {})", text(at(id, "model")), text(at(id, "firmware")));
      }
    return s;
  }, "the ratios then compare the devices as well as the variants");
  // Options: a document's value of a key is the one all its runs share (a
  // key that varies inside a compare document is one of its axes: skipped).
  // Nested objects are compared key by key ("uring.sqpoll"); a key some
  // document lacks (psync has no uring options) does not apply to it.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> keys;  // key -> value -> files
  std::map<std::string, size_t> present;
  std::set<std::string> axes;
  for (const auto& d : docs) {
    std::vector<json> opts;
    if (d.kind == SavedDoc::Kind::Bench) opts.push_back(at(ctx(d), "options"));
    else
      for (const auto& v : d.doc()["variants"]) opts.push_back(at(v, "options"));
    std::map<std::string, std::set<std::string>> values;
    std::function<void(const std::string&, const json&)> flatten = [&](const std::string& prefix, const json& o) {
      for (const auto& [k, v] : o.items()) {
        if (v.is_object()) flatten(prefix + k + ".", v);
        else if (!v.is_null() || prefix.empty()) values[prefix + k].insert(v.dump());
      }
    };
    for (const auto& o : opts)
      if (o.is_object()) flatten("", o);
    for (const auto& [k, vs] : values) {
      ++present[k];
      if (vs.size() > 1) axes.insert(k);
      else keys[k][*vs.begin()].push_back(d.path);
    }
  }
  std::string diff;
  for (const auto& [k, by] : keys) {
    if (by.size() < 2 || axes.count(k) || present[k] < docs.size() || k == "log_interval_s") continue;
    std::string list;
    for (const auto& [value, files] : by) {
      std::string f;
      for (const auto& x : files) join(f, ", ", x);
      join(list, ", ", fmt::format("{} in {}", value, f));
    }
    join(diff, "; ", fmt::format("{} ({})", k, list));
  }
  if (!diff.empty())
    out.push_back(fmt::format("warning: the files ran with different options: {}; make sure that is the difference you "
                              "mean to measure", diff));
  return out;
}

}  // namespace ioacct
