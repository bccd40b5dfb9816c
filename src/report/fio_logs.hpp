#pragma once
// fio's write_bw_log, write_iops_log and write_lat_log for a job file run by
// bench --fio: the run's time series in fio's log format, one line per
// interval ("msec, value, direction, 0, 0", as fio writes an averaged log:
// log_avg_msec), so that fio's log tools and fio-plot read them.
#include <string>
#include <vector>

#include "runner/result.hpp"
#include "workload/fio_file.hpp"
#include "workload/job.hpp"

namespace ioacct {

struct FioLogFile {
  std::string path;  // PREFIX_bw.N.log, as fio names it (N: the job's number, from 1)
  std::string text;
};

// The files `logs` asks for, from the run's series; none without a series.
std::vector<FioLogFile> fio_log_files(const FioLogs& logs, unsigned job_number, const JobSpec& job, const RunResult& r);

}  // namespace ioacct
