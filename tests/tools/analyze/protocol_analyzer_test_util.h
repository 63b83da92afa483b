#pragma once
// What the analyzer tests of protocols read on their own UDP port (GOAT, PLink) share: their
// registry entry, swemu-analyze's options, and a fixture that writes frames to a pcap, analyzes
// it as swemu-analyze does (ATP on its default port beside) and keeps the text, JSON and CSV
// outputs and each frame's cells of the protocol's columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "tools/analyze/run_analysis.h"

namespace swemu::testing {

inline constexpr TimeNs kAnalyzerStartNs = 1'700'000'000'000'000'000;

inline boost::program_options::variables_map AnalyzerOptions(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options;
  for (const ProtocolEntry& entry : Protocols()) entry.add_options(options);
  std::vector<const char*> argv = {"swemu-analyze"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(), options), vm);
  return vm;
}

inline const ProtocolEntry* ProtocolNamed(std::string_view name) {
  for (const ProtocolEntry& entry : Protocols()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

// One frame of the pcap: its bytes, how many were captured (0: all), its time after
// kAnalyzerStartNs (kNever: 1 us per frame).
struct PcapFrame {
  std::vector<uint8_t> bytes;
  uint32_t caplen = 0;
  TimeNs ns = kNever;
};

class ProtocolAnalyzerTest : public ::testing::Test {
 protected:
  // `protocol` names the CSV (<protocol>.csv), the first column (<protocol>.version) and the
  // directory; `fields` is how many columns it has. compact_json drops the JSON's whitespace.
  ProtocolAnalyzerTest(std::string protocol, std::size_t fields, bool compact_json)
      : protocol_(std::move(protocol)), fields_(fields), compact_json_(compact_json) {}

  void AnalyzeFrames(const std::vector<PcapFrame>& frames, const std::vector<std::string>& args) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string dir = ::testing::TempDir() + "/" + protocol_ + "_analyzer/" + info->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    pcap_ = dir + "/port0.pcap";
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(pcap_);
    ASSERT_TRUE(writer.ok()) << writer.message();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const auto len = static_cast<uint32_t>(frames[i].bytes.size());
      const uint32_t caplen = frames[i].caplen == 0 ? len : frames[i].caplen;
      const TimeNs ns = frames[i].ns == kNever ? 1000 * i : frames[i].ns;
      (*writer)->Write(kAnalyzerStartNs + ns, frames[i].bytes.data(), caplen, len);
    }
    ASSERT_TRUE((*writer)->Close().ok());
    Result<RunInput> input = ScanRunInput(pcap_);
    ASSERT_TRUE(input.ok()) << input.message();
    Result<std::unique_ptr<RunAnalysis>> run =
        RunAnalysis::Make(std::move(*input), {{kAtpDefaultUdpPort, "atp"}}, AnalyzerOptions(args));
    ASSERT_TRUE(run.ok()) << run.message();
    std::ostringstream packets;
    packets << PacketsCsvHeader() << "\n";
    ASSERT_TRUE((*run)->Analyze(1'000'000, 20, &packets).ok());
    ReadPackets(packets.str());
    std::ostringstream text;
    (*run)->WriteText(text, 20);
    text_ = text.str();
    JsonWriter json;
    (*run)->WriteJson(json);
    json_ = json.str();
    if (compact_json_) {
      json_.erase(std::remove_if(json_.begin(), json_.end(), ::isspace), json_.end());
    }
    ASSERT_TRUE((*run)->WriteCsv(dir, true).ok());
    std::ifstream in(dir + "/" + protocol_ + ".csv");
    std::stringstream csv;
    csv << in.rdbuf();
    csv_ = csv.str();
  }

  // Per frame: its cells of the protocol's columns and its malformed reason.
  void ReadPackets(const std::string& packets) {
    std::istringstream in(packets);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = Split(line);
    const auto first =
        std::find(header.begin(), header.end(), protocol_ + ".version") - header.begin();
    ASSERT_LE(first + fields_, header.size());
    cells_.clear();
    malformed_.clear();
    while (std::getline(in, line)) {
      const std::vector<std::string> row = Split(line);
      ASSERT_EQ(row.size(), header.size()) << line;
      std::string cells;
      for (std::size_t i = 0; i < fields_; ++i) cells += (i ? "," : "") + row[first + i];
      cells_.push_back(cells);
      malformed_.push_back(row.back());
    }
  }

  static std::vector<std::string> Split(const std::string& line) {
    std::vector<std::string> cells;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
  }

  bool Has(const std::string& text, const std::string& part) const {
    return text.find(part) != std::string::npos;
  }

  std::string pcap_, text_, json_, csv_;
  std::vector<std::string> cells_, malformed_;

 private:
  std::string protocol_;
  std::size_t fields_;
  bool compact_json_;
};

}  // namespace swemu::testing
