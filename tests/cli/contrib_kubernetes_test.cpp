// contrib/kubernetes/ validated offline (scripts/check_k8s): every built-in
// object walked against the Kubernetes API's own types as Debian ships them
// (python3-kubernetes), prometheus-operator's monitors against the schema in
// contrib/kubernetes/schemas, and ioacct's least-privilege and one-window
// rules. Each kind of mistake the check exists for is made on a copy, and
// must be caught.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

const std::string kSource = IOACCT_SOURCE_DIR;

// The check's output and exit code ("...rc=N").
std::string check(const std::string& files) {
  return sh("cd " + kSource + " && scripts/check_k8s " + files + " 2>&1; echo rc=$?");
}

bool have_validator() {
  return system("/usr/bin/python3 -c 'import kubernetes, jsonschema, yaml' 2>/dev/null") == 0;
}

TEST(ContribKubernetes, TheManifestsPassTheApisTypesAndIoacctsRules) {
  if (!have_validator()) GTEST_SKIP() << "python3-kubernetes or python3-jsonschema is not installed (scripts/setup installs them)";
  const std::string out = check("contrib/kubernetes/bench-job.yaml contrib/kubernetes/export.yaml "
                                "contrib/kubernetes/export-podmonitor.yaml");
  EXPECT_EQ(out, "ok: 5 documents\nrc=0") << out;
}

TEST(ContribKubernetes, EachMistakeIsCaught) {
  if (!have_validator()) GTEST_SKIP() << "python3-kubernetes or python3-jsonschema is not installed (scripts/setup installs them)";
  TempDir dir;
  struct Case {
    const char* file;
    const char* from;
    const char* to;
    const char* says;
  };
  const Case cases[] = {
      {"bench-job.yaml", "completionMode: Indexed", "completionMod: Indexed", "spec.completionMod: unknown field of JobSpec"},
      {"bench-job.yaml", "parallelism: 3 ", "parallelism: \"3\" ", "spec.parallelism: int expected"},
      {"bench-job.yaml", "        - name: bench", "        - image2: x", "Invalid value for `name`, must not be `None`"},
      {"bench-job.yaml", "parallelism: 3 ", "parallelism: 2 ", "parallelism must equal completions"},
      {"bench-job.yaml", "topologyKey: kubernetes.io/hostname", "topologyKey: topology.kubernetes.io/zone", "one pod per node"},
      {"bench-job.yaml", "$(IOACCT_START_AT)", "'@1796139600'", "not passed in from an env variable"},
      {"bench-job.yaml", "      automountServiceAccountToken: false", "      hostPID: true", "hostPID is for the export DaemonSet only"},
      {"bench-job.yaml", "hostPath: {path: /var/lib/ioacct/results, type: DirectoryOrCreate}", "emptyDir: {}", "outlives the pod"},
      {"export.yaml", "add: [BPF, PERFMON]", "add: [BPF, PERFMON, SYS_ADMIN]", "beyond BPF and PERFMON"},
      {"export.yaml", "drop: [ALL]", "drop: [NET_RAW]", "drop must be [ALL]"},
      {"export.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "readOnlyRootFilesystem must be true"},
      {"export.yaml", "targetLabel: host", "targetLable: host", "'targetLable' was unexpected"},
      {"export.yaml", "interval: 15s", "interval: 15 s", "interval: '15 s' does not match"},
      {"export.yaml", "    - {name: metrics, port: 19464", "    - {name: metrics, port: \"19464\"", "port: int expected"},
      {"export-podmonitor.yaml", "  selector:", "  selectr:", "'selector' is a required property"},
  };
  // One run of the check over every broken copy (importing the API's
  // types takes most of its time); each copy's lines start with its path.
  std::string files;
  for (size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    std::string text = slurp(kSource + "/contrib/kubernetes/" + c.file);
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.file << ": " << c.from;
    text.replace(at, std::string(c.from).size(), c.to);
    const std::string copy = dir.path() + "/" + std::to_string(i) + "-" + c.file;
    std::ofstream(copy) << text;
    files += " " + copy;
  }
  const std::string out = check(files);
  EXPECT_EQ(out.substr(out.size() - 4), "rc=1") << out;
  for (size_t i = 0; i < std::size(cases); ++i) {
    const std::string copy = dir.path() + "/" + std::to_string(i) + "-" + cases[i].file;
    bool found = false;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      found |= line.rfind(copy, 0) == 0 && line.find(cases[i].says) != std::string::npos;
    EXPECT_TRUE(found) << cases[i].file << " with " << cases[i].to << ": no line saying " << cases[i].says << "\n" << out;
  }
}

}  // namespace
}  // namespace ioacct::test
