#include "report/html_page.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <set>

#include "report/html_report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

// JSON inside <script>: "</" must not end the element early.
std::string script_safe(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') out += "\\";
  }
  return out;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "vda: virtio_blk, firmware not reported" for every device the targets sit on.
std::string devices(const json& ctx) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const json& t) {
    if (!t.is_object() || !t.contains("device_identity") || !t["device_identity"].is_object()) return;
    const json& id = t["device_identity"];
    const std::string disk = str(id, "disk");
    const std::string model = str(id, "model"), fw = str(id, "firmware");
    std::string line = fmt::format("{}: {}, {}", disk.empty() ? str(t, "device") : disk,
                                   model.empty() ? "model not reported" : model,
                                   fw.empty() ? "firmware not reported" : "firmware " + fw);
    if (seen.insert(line).second) out.push_back(std::move(line));
  };
  if (ctx.contains("targets") && ctx["targets"].is_array())
    for (const auto& t : ctx["targets"]) add(t);
  std::string s;
  for (const auto& l : out) {
    if (!s.empty()) s += "; ";
    s += l;
  }
  return s.empty() ? "no block device (the target's filesystem has none)" : s;
}

std::string context_table(const json& data) {
  const json& ctx = data.contains("context") ? data["context"] : json::object();
  auto row = [](const std::string& k, const std::string& v) {
    return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_html(k), escape_html(v));
  };
  std::string cmd;
  if (ctx.contains("command_line") && ctx["command_line"].is_array())
    for (const auto& w : ctx["command_line"])
      if (w.is_string()) {
        if (!cmd.empty()) cmd += ' ';
        cmd += w.get<std::string>();
      }
  std::string out = "<table class=\"context\">\n";
  // The run's own start time where its JSON has one; else when this page was written.
  const std::string start = str(ctx, "start_time");
  out += start.empty() ? row("date", str(data, "report_time") + " (report written)") : row("date", start);
  out += row("host", str(ctx, "host"));
  out += row("kernel", str(ctx, "kernel"));
  out += row("device", devices(ctx));
  out += row("CPU", fmt::format("{} ({} CPUs, {} allowed)", str(ctx, "cpu_model"), ctx.value("cpus", 0),
                                ctx.value("cpus_allowed", 0)));
  out += row("ioacct", str(ctx, "ioacct_version"));
  out += row("command", cmd);
  if (data.contains("context_rows") && data["context_rows"].is_array())
    for (const auto& r : data["context_rows"])
      if (r.is_array() && r.size() == 2 && r[0].is_string() && r[1].is_string()) out += row(r[0], r[1]);
  return out + "</table>\n";
}

}  // namespace

std::string escape_html(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string html_table(const std::vector<std::vector<std::string>>& rows, const std::function<bool(size_t)>& is_text,
                       const std::string& css_class) {
  if (rows.empty()) return "";
  std::string t = css_class.empty() ? "<table>\n<tr>" : fmt::format("<table class=\"{}\">\n<tr>", css_class);
  for (size_t j = 0; j < rows[0].size(); ++j)
    t += fmt::format("<th{}>{}</th>", is_text(j) ? " class=\"text\"" : "", escape_html(rows[0][j]));
  t += "</tr>\n";
  for (size_t i = 1; i < rows.size(); ++i) {
    t += "<tr>";
    for (size_t j = 0; j < rows[i].size(); ++j)
      t += fmt::format("<td{}>{}</td>", is_text(j) ? " class=\"text\"" : "", escape_html(rows[i][j]));
    t += "</tr>\n";
  }
  return t + "</table>\n";
}

std::string rfc3339_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

std::string render_html(const HtmlPage& p, const nlohmann::json& data) {
  std::string head;
  if (!p.question.empty()) head += "<p class=\"question\">" + escape_html(p.question) + "</p>\n";
  if (!p.headline.empty()) head += "<p class=\"headline\" id=\"headline\">" + escape_html(p.headline) + "</p>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}</title>\n"
      "<style>{style}</style>\n</head>\n<body class=\"{kind}\">\n<header>\n<h1>{title}</h1>\n{head}{context}</header>\n"
      "<main>\n{body}</main>\n<footer class=\"note\">Charts by Chart.js {chartjs_version} (MIT licence), embedded; "
      "the data behind every chart is in this file (script#ioacct-data, the same JSON as --format json).</footer>\n"
      "<script type=\"application/json\" id=\"ioacct-data\">{data}</script>\n"
      "<script>{chartjs}</script>\n<script>{script}</script>\n</body>\n</html>\n",
      fmt::arg("title", escape_html(p.title)), fmt::arg("style", kReportCss), fmt::arg("kind", p.kind),
      fmt::arg("head", head), fmt::arg("context", context_table(data)), fmt::arg("body", p.body),
      fmt::arg("chartjs_version", kChartJsVersion), fmt::arg("data", script_safe(data.dump())),
      fmt::arg("chartjs", kChartJs), fmt::arg("script", kReportJs));
}

}  // namespace ioacct
