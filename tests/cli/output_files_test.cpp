// -o/--output and --report onto what already exists: a regular file is
// replaced whole (through a temporary name and a rename); anything else is
// never replaced. Character devices and FIFOs are written straight into;
// block devices, sockets and directories are usage errors before the run.
// Found by a test pass: '-o mynull' (a copy of /dev/null) became a regular
// file, '-o FIFO' left its reader with nothing, and '-o DIR' failed only after
// the whole run.
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

const std::vector<std::string> kQuick = {"bench", "--engine", "nop", "--size", "1m", "--ios", "100"};

std::vector<std::string> quick(std::vector<std::string> more) {
  std::vector<std::string> args = kQuick;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool is_char_device(const std::string& path, unsigned maj, unsigned min) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == maj && minor(st.st_rdev) == min;
}

void expect_refused_before_the_run(const Outcome& o, const std::string& says) {
  expect_refused(o, {says});
  EXPECT_EQ(o.err.find("ioacct bench:"), std::string::npos) << "nothing ran: " << o.err;
}

TEST(OutputFiles, ACharacterDeviceIsWrittenIntoNeverReplaced) {
  TempDir dir;
  const std::string null = dir.path() + "/mynull";
  sh("mknod -m 666 " + null + " c 1 3");
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    auto o = run_ioacct(quick({flag, null}));
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_TRUE(is_char_device(null, 1, 3)) << "still the null device";
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"mynull"}) << "no temporary file left beside it";
  }
}

// The habit '-o /dev/null', as root. Only once a copy of the node survived
// (above, and here first): a build that replaces device nodes must not get to
// replace the machine's /dev/null.
TEST(OutputFiles, DevNullAsRootStaysDevNull) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: /dev/null cannot be replaced anyway";
  TempDir dir;
  const std::string copy = dir.path() + "/null";
  sh("mknod -m 666 " + copy + " c 1 3");
  auto first = run_ioacct(quick({"-o", copy, "--report", copy}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(is_char_device(copy, 1, 3)) << "this build replaces device nodes: not trying /dev/null";
  auto o = run_ioacct(quick({"--format", "json", "-o", "/dev/null", "--report", "/dev/null"}));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_TRUE(is_char_device("/dev/null", 1, 3)) << "/dev/null must stay the null device";
}

// Reads `path` (a FIFO) until its writer closes it, for at most `limit`.
std::string drain_fifo(const std::string& path, std::chrono::seconds limit) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "cannot open: " + std::string(std::strerror(errno));
  std::string got;
  const auto end = std::chrono::steady_clock::now() + limit;
  char buf[65536];
  while (std::chrono::steady_clock::now() < end) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
    } else if (n == 0 && !got.empty()) {
      break;  // the writer came and went
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // no writer yet, or no data yet
    }
  }
  close(fd);
  return got;
}

TEST(OutputFiles, AFifoGetsTheReport) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  sh("mkfifo " + fifo);
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    std::string read_back;
    std::thread reader([&] { read_back = drain_fifo(fifo, std::chrono::seconds(60)); });
    auto o = run_ioacct(quick({"--format", "json", flag, fifo}));
    reader.join();
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(read_back.find(std::string(flag) == "-o" ? "\"schema_version\"" : "<html"), std::string::npos)
        << "the reader got: " << read_back.substr(0, 200);
    struct stat st {};
    EXPECT_TRUE(lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) << "still a FIFO";
  }
}

TEST(OutputFiles, ASocketIsRefusedBeforeTheRun) {
  TempDir dir;
  const std::string path = dir.path() + "/sock";
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << std::strerror(errno);
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    expect_refused_before_the_run(run_ioacct(quick({flag, path})), path + ": is a socket");
    struct stat st {};
    EXPECT_TRUE(lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) << "still a socket";
  }
  close(s);
}

TEST(OutputFiles, ABlockDeviceIsRefusedBeforeTheRun) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("printf 'precious' | dd of=" + loop.path() + " conv=notrunc status=none");
  // A node of its own for the same device, in the test's directory: a build
  // that replaces device nodes then replaces this one, never /dev's.
  struct stat dev {};
  ASSERT_EQ(stat(loop.path().c_str(), &dev), 0);
  const std::string node = dir.path() + "/disk";
  sh("mknod -m 600 " + node + " b " + std::to_string(major(dev.st_rdev)) + " " + std::to_string(minor(dev.st_rdev)));
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    expect_refused_before_the_run(run_ioacct(quick({flag, node})), node + ": is a block device");
    struct stat st {};
    EXPECT_TRUE(lstat(node.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) << "still the device node";
    EXPECT_EQ(sh("head -c 8 " + loop.path()), "precious") << "nothing written into it";
  }
}

TEST(OutputFiles, ADirectoryIsAUsageErrorBeforeTheRun) {
  TempDir dir;
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    // A run that would take a minute: the error must come before it.
    auto o = run_ioacct({"bench", "--engine", "nop", "--size", "1m", "--runtime", "60s", flag, dir.path()},
                        {.timeout_s = 30});
    expect_refused_before_the_run(o, dir.path() + ": is a directory");
    EXPECT_TRUE(dir.entries().empty()) << "nothing created inside it";
  }
  auto c = run_ioacct({"compare", "--engine", "nop,uring", "--runtime", "60s", "--size", "1m", "-o", dir.path()},
                      {.timeout_s = 30});
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find(dir.path() + ": is a directory"), std::string::npos) << c.err;
}

// Regular files keep their behaviour: replaced whole, atomically.
TEST(OutputFiles, ARegularFileIsReplacedWhole) {
  TempDir dir;
  const std::string f = dir.path() + "/out.json";
  sh("echo old > " + f);
  auto o = run_ioacct(quick({"--format", "json", "-o", f}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(sh("head -c 1 " + f), "{");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.json"});
}

// A symlink is followed, never replaced: the file it names gets the report.
TEST(OutputFiles, ASymlinkStaysASymlink) {
  TempDir dir;
  const std::string f = dir.path() + "/real.json", link = dir.path() + "/link.json";
  sh("echo old > " + f + " && ln -s real.json " + link);
  auto o = run_ioacct(quick({"--format", "json", "-o", link}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  struct stat st {};
  EXPECT_TRUE(lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) << "still a symlink";
  EXPECT_EQ(sh("head -c 1 " + f), "{");
  // A link to a file not there yet: the file is created where the link points.
  const std::string dangling = dir.path() + "/new.json";
  sh("ln -s made.json " + dangling);
  auto n = run_ioacct(quick({"--format", "json", "-o", dangling}));
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_TRUE(lstat(dangling.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) << "still a symlink";
  EXPECT_EQ(sh("head -c 1 " + dir.path() + "/made.json"), "{");
}

// What /dev/stdout is: a link to the process's own stdout, here a pipe. (A
// link of the test's own, so that a build that replaces links replaces that.)
TEST(OutputFiles, ALinkToStdoutWritesToStdout) {
  TempDir dir;
  const std::string link = dir.path() + "/stdout";
  sh("ln -s /proc/self/fd/1 " + link);
  auto o = run_ioacct(quick({"--format", "json", "-o", link}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("{", 0), 0u) << "the report came out on stdout: " << o.out.substr(0, 100);
  struct stat st {};
  EXPECT_TRUE(lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) << "still a symlink";
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"stdout"});
}

// A FIFO nobody reads: ioacct says it waits, and a stop signal ends the wait.
TEST(OutputFiles, AFifoWithoutAReaderWaitsUntilStopped) {
  TempDir dir;
  const std::string fifo = dir.path() + "/fifo";
  sh("mkfifo " + fifo);
  auto o = run_ioacct(quick({"-o", fifo}), {.signal = SIGTERM, .signal_after = "waiting for a reader", .timeout_s = 60});
  EXPECT_EQ(o.exit_code, 128 + SIGTERM) << o.err;
  EXPECT_NE(o.err.find("ioacct: waiting for a reader of the FIFO " + fifo + " (--output)"), std::string::npos) << o.err;
  EXPECT_LT(o.signal_to_exit_s, 1.0);
  struct stat st {};
  EXPECT_TRUE(lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) << "still a FIFO";
}

// Issue 30: root writing -o/--report where an unprivileged user points it. The
// planter is really uid 65534, in a sticky world-writable directory of the
// test's own (as /tmp is); the victim is a root file outside it.
constexpr uid_t kNobodyUid = 65534;

// `<dir>/tmp`, mode 1777, with `dir` opened to others (0711) so they reach it.
std::string sticky_dir(const TempDir& dir) {
  const std::string tmp = dir.path() + "/tmp";
  sh("chmod 0711 " + dir.path() + " && mkdir " + tmp + " && chmod 1777 " + tmp);
  return tmp;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Runs `plant` as uid/gid 65534 with no groups, in a child of its own.
void as_nobody(const std::function<void()>& plant) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(kNobodyUid, kNobodyUid, kNobodyUid) != 0 ||
        setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0)
      _exit(3);
    plant();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the planter failed: " << status;
}

void plant_link(const std::string& target, const std::string& link) {
  as_nobody([&] {
    if (symlink(target.c_str(), link.c_str()) != 0) _exit(4);
  });
  struct stat st {};
  ASSERT_TRUE(lstat(link.c_str(), &st) == 0 && st.st_uid == kNobodyUid) << link;
}

std::string refusal(const std::string& link, const std::string& tmp) {
  return link + ": is a symlink owned by uid 65534 in the sticky world-writable directory " + tmp +
         "; ioacct does not follow it (remove it or give another name)";
}

// (a) /tmp/r.json -> /root/victim, planted by nobody: once /root/victim got the JSON.
TEST(OutputFiles, AForeignSymlinkInAStickyDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: the attack is on root's writes";
  TempDir dir;
  const std::string tmp = sticky_dir(dir), victim = dir.path() + "/victim", link = tmp + "/r.json";
  sh("printf precious > " + victim);
  plant_link(victim, link);
  // And root's own link that leads to it: followed up to the foreign one, no further.
  const std::string mine = tmp + "/mine.json";
  ASSERT_EQ(symlink(link.c_str(), mine.c_str()), 0);
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    expect_refused_before_the_run(run_ioacct(quick({"--format", "json", flag, link})),
                                  std::string(flag == std::string("-o") ? "--output" : "--report") + ": " +
                                      refusal(link, tmp));
    EXPECT_EQ(read_file(victim), "precious");
    EXPECT_TRUE(is_symlink(link)) << "the planted link is left as it is";
    expect_refused_before_the_run(run_ioacct(quick({flag, mine})), mine + ": leads to " + link + ", a symlink owned by uid 65534");
    EXPECT_EQ(read_file(victim), "precious");
  }
  auto c = run_ioacct({"compare", "--engine", "nop,uring", "--runtime", "60s", "--size", "1m", "-o", link}, {.timeout_s = 30});
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find(refusal(link, tmp)), std::string::npos) << c.err;
  EXPECT_EQ(read_file(victim), "precious");
}

// (b) A dangling one: root would create the file it names.
TEST(OutputFiles, ADanglingForeignSymlinkIsRefusedAndNothingIsCreated) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: the attack is on root's writes";
  TempDir dir;
  const std::string tmp = sticky_dir(dir), target = dir.path() + "/made-by-root", link = tmp + "/r.json";
  plant_link(target, link);
  for (const char* flag : {"-o", "--report"}) {
    SCOPED_TRACE(flag);
    expect_refused_before_the_run(run_ioacct(quick({flag, link})), refusal(link, tmp));
    EXPECT_NE(access(target.c_str(), F_OK), 0) << "the link's target was created";
  }
}

// Sets a sysctl for the test's time, and puts it back.
class Sysctl {
 public:
  Sysctl(std::string path, const std::string& value) : path_(std::move(path)), old_(read_file(path_)) {
    std::ofstream(path_) << value;
  }
  ~Sysctl() { std::ofstream(path_) << old_; }
  Sysctl(const Sysctl&) = delete;
  Sysctl& operator=(const Sysctl&) = delete;

 private:
  std::string path_, old_;
};

// (c) The temporary name was `<path>.tmp.<pid>`, opened O_CREAT|O_TRUNC: with
// links planted at the next pids, root wrote the victim (protected_symlinks=0
// lets the kernel follow them; ioacct must not need it).
TEST(OutputFiles, LinksPlantedAtGuessableTemporaryNamesDoNotMatter) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: the attack is on root's writes, and the sysctl is root's";
  const Sysctl off("/proc/sys/fs/protected_symlinks", "0");
  ASSERT_EQ(read_file("/proc/sys/fs/protected_symlinks"), "0\n");
  TempDir dir;
  const std::string tmp = sticky_dir(dir), victim = dir.path() + "/victim";
  const std::string out = tmp + "/p.json", report = tmp + "/p.html";
  sh("printf precious > " + victim);
  const long next = std::stol(read_file("/proc/sys/kernel/ns_last_pid")) + 1;
  as_nobody([&] {
    for (const std::string& base : {out, report}) {
      for (const char* suffix : {".tmp", ".tmp.", ".tmp.0", ".tmp.1", ".tmp.tmp"})
        if (symlink(victim.c_str(), (base + suffix).c_str()) != 0) _exit(4);
      for (long pid = next; pid < next + 2000; ++pid)
        if (symlink(victim.c_str(), fmt::format("{}.tmp.{}", base, pid).c_str()) != 0) _exit(4);
    }
  });
  auto o = run_ioacct(quick({"--format", "json", "-o", out, "--report", report}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(victim), "precious") << "written through a planted link";
  EXPECT_FALSE(is_symlink(out));
  EXPECT_EQ(read_file(out).substr(0, 1), "{");
  EXPECT_NE(read_file(report).find("<html"), std::string::npos);
}

// (d) The caller's own links in /tmp keep working: the file a link names is replaced, the link stays.
TEST(OutputFiles, TheCallersOwnSymlinkInAStickyDirectoryIsFollowed) {
  TempDir dir;
  const std::string tmp = sticky_dir(dir), file = dir.path() + "/mine.json", link = tmp + "/r.json";
  sh("echo old > " + file + " && ln -s " + file + " " + link);
  auto o = run_ioacct(quick({"--format", "json", "-o", link}));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(is_symlink(link)) << "still a symlink";
  EXPECT_EQ(read_file(file).substr(0, 1), "{");
  const std::string dangling = tmp + "/new.json", made = dir.path() + "/made.json";
  sh("ln -s " + made + " " + dangling);
  auto n = run_ioacct(quick({"--format", "json", "-o", dangling}));
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_EQ(read_file(made).substr(0, 1), "{");
}

// (e) A full disk at the end of a run: the error names the errno, and the
// results come out on stdout rather than being lost.
TEST(OutputFiles, AFullDiskNamesTheErrnoAndTheResultsGoToStdout) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: mounting a tmpfs needs it";
  TempDir dir;
  const std::string mnt = dir.path() + "/small";
  sh("mkdir " + mnt);
  Mount m("-t tmpfs tmpfs", mnt, "size=64k");
  sh("dd if=/dev/zero of=" + mnt + "/fill bs=4k 2>/dev/null; true");
  const std::string out = mnt + "/r.json";
  auto o = run_ioacct(quick({"--format", "json", "-o", out}));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("--output: writing " + out + " failed: No space left on device"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("the results went to stdout instead"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.rfind("{", 0), 0u) << o.out.substr(0, 100);
  EXPECT_NE(o.out.find("\"schema_version\""), std::string::npos);
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "no half-written file";
  EXPECT_EQ(sh("ls -A " + mnt), "fill") << "no temporary file left";
}

}  // namespace
}  // namespace ioacct::test
