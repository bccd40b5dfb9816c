// fio job files: reading and mapping either return jobs or throw UsageError
// whose every line names a file and line ("a.fio:3: ..."), or the file
// itself; nothing else (no crash, no hang, no other exception). The input is
// up to three files, split at lines "@@": a.fio includes b.fio and c.fio by
// name; ${A...} variables are set, the others unset.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "common/errors.hpp"
#include "workload/fio_file.hpp"

using namespace ioacct;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> files;
  const char* names[] = {"a.fio", "b.fio", "c.fio"};
  size_t start = 0;
  for (int k = 0; k < 3; ++k) {
    const size_t cut = k < 2 ? text.find("\n@@\n", start) : std::string::npos;
    files[names[k]] = text.substr(start, cut == std::string::npos ? std::string::npos : cut - start);
    if (cut == std::string::npos) break;
    start = cut + 4;
  }
  FioEnv env;
  env.read = [&](const std::string& path, std::string& error) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      error = "No such file or directory (ENOENT)";
      return std::nullopt;
    }
    return it->second;
  };
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (!name.empty() && name[0] == 'A') return "4k";
    return std::nullopt;
  };
  env.pagesize = 4096;
  env.mb_memory = 24000;
  env.ncpus = 2;
  try {
    const FioRun run = map_fio(read_fio_file("a.fio", env), 1);
    if (run.jobs.empty()) std::abort();  // no jobs is an error, never an empty run
    for (const auto& j : run.jobs)
      if (j.words.empty() || j.name.empty()) std::abort();
  } catch (const UsageError& e) {
    const std::string_view msg = e.what();
    size_t pos = 0;
    while (pos <= msg.size()) {  // every line names where
      const std::string_view line = msg.substr(pos, msg.find("\nerror: ", pos) - pos);
      if (line.rfind("a.fio", 0) != 0 && line.rfind("b.fio", 0) != 0 && line.rfind("c.fio", 0) != 0 &&
          line.rfind("--fio: a.fio", 0) != 0)
        std::abort();
      const size_t next = msg.find("\nerror: ", pos);
      if (next == std::string_view::npos) break;
      pos = next + 8;
    }
  }
  return 0;
}
