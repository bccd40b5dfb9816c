#pragma once
// The frame every HTML report shares: the header (what was asked and its
// answer, when and where it ran: date, host, kernel, CPU, device model and
// firmware), the page's own tables, the data inlined as JSON, Chart.js, and
// the page script (html/report.js) that draws the charts from that data.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ioacct {

struct HtmlPage {
  std::string kind;      // "compare" or "bench": which charts the script draws
  std::string title;     // the <h1>
  std::string question;  // compare's preset question, or ""
  std::string headline;  // its answer, or the run in one line
  std::string body;      // the page's own HTML, after the header
};
// `data` is inlined for the script: compare's or bench's JSON, plus "kind",
// "report_time" and "context_rows" (more header rows). Its "context" fills
// the header.
std::string render_html(const HtmlPage& p, const nlohmann::json& data);

std::string escape_html(const std::string& s);
// A table: the first row is the header; text columns align left, figures right.
std::string html_table(const std::vector<std::vector<std::string>>& rows, const std::function<bool(size_t)>& is_text,
                       const std::string& css_class = "");
// The current time as RFC 3339 in UTC ("2025-01-02T03:04:05Z").
std::string rfc3339_now();

// Embedded at build time from src/report/html/.
extern const char* const kReportJs;
extern const char* const kReportCss;

}  // namespace ioacct
