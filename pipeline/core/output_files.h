#pragma once
// Every file a swemu tool writes goes through OutputFiles, so that one rule holds everywhere:
// - a regular file (or a new name) is written aside (PATH.tmp-<pid>, or a staging directory
//   DIR/.swemu-staging-<pid>/ for many files in one directory) and renamed into place only
//   when the whole output is complete; a failed run (a full disk, a bad input found late, a
//   signal) leaves the earlier files as they were;
// - a FIFO or a character device (/dev/null, /dev/stdout, a pipe) is written through: it is
//   never replaced by a regular file;
// - anything else (a directory, a block device, a socket, "", a name ending in '/') is refused
//   with one line, before any work, by CheckOutputPath.
// Temporary files and directories are registered with interrupt.h, so a tool ended by a
// signal removes them.
#include <string>
#include <utility>
#include <vector>

#include "pipeline/core/interrupt.h"
#include "pipeline/core/status.h"

namespace swemu {

// Checks an output file before a run, touching nothing: "OPTION PATH: <why>".
Status CheckOutputPath(const std::string& path, const std::string& option);
// The same for a directory of outputs (made if missing, as --out-dir is): "OPTION PATH: <why>".
Status CheckOutputDirectory(const std::string& path, const std::string& option);
// True when `path` names a FIFO or a character device (written through, never replaced).
bool WrittenThrough(const std::string& path);

class OutputFiles {
 public:
  OutputFiles() = default;
  ~OutputFiles();  // removes whatever was not committed
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  // Where to write `final_path` during the run: PATH.tmp-<pid> beside it, or the path itself
  // when it is written through. A missing parent directory is made.
  std::string Aside(const std::string& final_path);
  // Where to write DIR/NAME: in DIR's staging directory (made, with DIR, on first use).
  Result<std::string> Staged(const std::string& dir, const std::string& name);
  // DIR's staging directory (made, with DIR, on first use): files written there are moved
  // into DIR only when Staged names them.
  Result<std::string> StagingDirectory(const std::string& dir);
  // Writes `text` as `final_path` (aside, until Commit); "cannot write FINAL_PATH (<why>)".
  Status WriteText(const std::string& final_path, const std::string& text);
  // A temporary file beside `near` that is never moved into place (removed at the end).
  std::string Scratch(const std::string& near, const std::string& tag);
  // An error naming a temporary path names the file the user asked for instead.
  Status Unstaged(const Status& status) const;
  // Moves every file into place, in the order asked for.
  Status Commit();

 private:
  struct Move {
    std::string temp;
    std::string final_path;  // empty: scratch
  };
  std::vector<Move> moves_;
  std::vector<std::pair<std::string, std::string>> staging_;  // DIR, DIR/.swemu-staging-<pid>
  std::vector<std::string> made_dirs_;  // made by this run; removed again if it fails
  std::vector<RemovedOnInterrupt> on_interrupt_;
  bool committed_ = false;
};

// Writes (replaces) a whole text file through OutputFiles; the error reads "cannot write PATH
// (<why>)", after "OPTION: " when the file is an option's, and leaves an earlier PATH as it was.
Status WriteTextFile(const std::string& path, const std::string& text,
                     const std::string& option = "");

}  // namespace swemu
