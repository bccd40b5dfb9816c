#include "cli/run_binary.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/loop.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace ioacct::test {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// In the child, before exec: io_uring_setup fails with ENOSYS, as on a kernel
// without io_uring. Only async-signal-safe calls here.
void deny_io_uring() {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

}  // namespace

Outcome run_ioacct(const std::vector<std::string>& args, const RunOptions& opts) {
  std::vector<std::string> argv_s = opts.prefix;
  // IOACCT_TEST_BINARY runs the tests against another build (to see a new
  // test fail on the code before its fix).
  const char* other = std::getenv("IOACCT_TEST_BINARY");  // NOLINT(concurrency-mt-unsafe)
  argv_s.push_back(other && *other ? other : IOACCT_BINARY);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  for (const auto& e : opts.env) env_s.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    setpgid(0, 0);
    if (opts.seccomp_deny_uring) deny_io_uring();
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  Outcome o;
  const double start = now_s();
  double seen_at = -1, signalled_at = -1;
  bool out_open = true, err_open = true, acted = false;
  std::vector<bool> steps_done;
  while (out_open || err_open) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    poll(fds, 2, 20);
    char buf[65536];
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(out_pipe[0], buf, sizeof(buf));
      if (n <= 0) out_open = false; else o.out.append(buf, static_cast<size_t>(n));
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(err_pipe[0], buf, sizeof(buf));
      if (n <= 0) err_open = false; else o.err.append(buf, static_cast<size_t>(n));
    }
    if ((opts.action || opts.action_pid) && !acted && o.err.find(opts.action_after) != std::string::npos) {
      acted = true;
      if (opts.action) opts.action();
      if (opts.action_pid) opts.action_pid(pid);
    }
    for (size_t k = 0; k < opts.steps.size(); ++k) {
      if (steps_done.size() < opts.steps.size()) steps_done.resize(opts.steps.size(), false);
      if (!steps_done[k] && o.err.find(opts.steps[k].first) != std::string::npos) {
        steps_done[k] = true;
        opts.steps[k].second(pid);
      }
    }
    if (opts.signal && signalled_at < 0) {
      if (seen_at < 0 && o.err.find(opts.signal_after) != std::string::npos) seen_at = now_s();
      if (seen_at >= 0 && now_s() - seen_at >= opts.signal_delay_s) {
        kill(pid, opts.signal);
        signalled_at = now_s();
      }
    }
    if (now_s() - start > opts.timeout_s) {
      ADD_FAILURE() << "ioacct did not finish within " << opts.timeout_s << " s; killing it";
      kill(-pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (signalled_at >= 0) o.signal_to_exit_s = now_s() - signalled_at;
  close(out_pipe[0]);
  close(err_pipe[0]);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

TempDir::TempDir() {
  std::string t = "/var/tmp/ioacct-test-XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  path_ = t;
}

TempDir::~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }

std::vector<std::string> TempDir::entries() const {
  std::vector<std::string> names;
  if (DIR* d = opendir(path_.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.emplace_back(e->d_name);
    closedir(d);
  }
  return names;
}

LoopDevice::LoopDevice(const std::string& dir, const LoopOptions& o) {
  std::string backing = o.backing;
  if (backing.empty()) {
    backing = dir + "/loop.img";
    if (o.random_data)
      sh("head -c " + o.size + " /dev/urandom > " + backing);
    else
      sh("truncate -s " + o.size + " " + backing);
  }
  dev_ = sh("losetup --find --show --sector-size " + std::to_string(o.sector_size) + (o.read_only ? " -r" : "") +
            (o.partitions ? " -P" : "") + " " + backing);
  remove_at_end_ = o.remove_at_end;
}

LoopDevice::~LoopDevice() {
  // Detaching also removes its partitions; a device still mounted cannot be
  // detached, so the Mount guards must go first (declare them after).
  if (dev_.empty() || removed_) return;
  if (remove_at_end_) detach_and_remove();
  else std::system(("losetup -d " + dev_ + " 2>/dev/null").c_str());
}

int LoopDevice::detach_and_remove() {
  std::system(("losetup -d " + dev_ + " 2>/dev/null").c_str());
  const int ctl = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0) return -errno;
  const int n = std::stoi(dev_.substr(std::string("/dev/loop").size()));
  // The detach lets go of the device a moment later: EBUSY until it has.
  int rc = -1;
  for (int i = 0; i < 100 && (rc = ioctl(ctl, LOOP_CTL_REMOVE, n)) < 0 && errno == EBUSY; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int err = rc < 0 ? errno : 0;
  ::close(ctl);
  if (err == 0) removed_ = true;
  return -err;
}

void LoopDevice::remove() {
  const int rc = detach_and_remove();
  ASSERT_EQ(rc, 0) << "removing " << dev_ << ": " << std::strerror(-rc);
}

std::string LoopDevice::add_partition(int number, uint64_t start_sector, uint64_t sectors) const {
  // BLKPG: no partition-table parser needed (this kernel has none built in).
  sh("addpart " + dev_ + " " + std::to_string(number) + " " + std::to_string(start_sector) + " " +
     std::to_string(sectors));
  return dev_ + "p" + std::to_string(number);
}

Mount::Mount(const std::string& source, const std::string& dir, const std::string& options) : dir_(dir) {
  sh("mount " + (options.empty() ? "" : "-o " + options + " ") + source + " " + dir);
}

Mount::~Mount() {
  if (std::system(("umount " + dir_ + " 2>/dev/null").c_str()) != 0)
    std::system(("umount -l " + dir_ + " 2>/dev/null").c_str());
}

std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << "command failed: " << cmd;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool machine_has_cpuidle() { return access("/sys/devices/system/cpu/cpu0/cpuidle", F_OK) == 0; }

void new_trace_instance(const std::string& dir) {
  sh("mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing");
  sh("rmdir " + dir + " 2>/dev/null; mkdir " + dir + " && echo 0 > " + dir + "/tracing_on");
}

uint64_t trace_events_lost(const std::string& dir) {
  return std::stoull(
      sh("cat " + dir + "/per_cpu/cpu*/stats | awk '/^overrun:|^dropped events:/ {s += $NF} END {print s+0}'"));
}

nlohmann::json run_fio(const std::string& job_file, const std::vector<std::string>& env, const std::string& cwd) {
  TempDir d;
  std::string cmd = cwd.empty() ? "" : "cd '" + cwd + "' && ";
  for (const auto& e : env) cmd += e + " ";
  cmd += "fio --output-format=json '" + job_file + "' 2>" + d.path() + "/err";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int rc = p ? pclose(p) : -1;
  const size_t at = out.find('{');
  if (rc != 0 || at == std::string::npos) {
    ADD_FAILURE() << "fio did not run " << job_file << " (exit " << rc << "):\n" << out << slurp(d.path() + "/err");
    return nullptr;
  }
  return nlohmann::json::parse(out.substr(at));
}

std::array<uint64_t, 2> disk_rw_asked(const std::string& name) {
  std::istringstream in(slurp("/sys/block/" + name + "/stat"));
  uint64_t f[6] = {};
  for (uint64_t& x : f) in >> x;
  return {f[0] + f[1], f[4] + f[5]};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_refused(const Outcome& o, const std::vector<std::string>& says, int code) {
  EXPECT_EQ(o.exit_code, code) << "stderr: " << o.err;
  EXPECT_TRUE(o.out.empty()) << "stdout should be empty, got: " << o.out;
  std::vector<std::string> errors;
  std::istringstream lines(o.err);
  for (std::string l; std::getline(lines, l);)
    if (l.rfind("error: ", 0) == 0) errors.push_back(l);
  ASSERT_EQ(errors.size(), 1u) << "one error: line: " << o.err;
  EXPECT_TRUE(o.err.ends_with(errors[0] + "\n")) << "the error is the last line: " << o.err;
  for (const auto& s : says)
    EXPECT_NE(errors[0].find(s), std::string::npos) << "the error should say '" << s << "': " << o.err;
}

nlohmann::json stdout_json(const Outcome& o) {
  try {
    return nlohmann::json::parse(o.out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "stdout is not JSON (" << e.what() << "); exit " << o.exit_code << ", stderr: " << o.err
                  << "\nstdout: " << o.out.substr(0, 2000);
    return nlohmann::json::object();
  }
}

}  // namespace ioacct::test
