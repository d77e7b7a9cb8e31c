// Measurement records from the default selector's sweep data: the compact file
// autotune/selector/collect_sweeps.py writes from gsparse-sweep runs over the graph zoo (the median
// time of every swept point per graph and feature length, with each graph's statistics, split and
// family). The cost model's features need nothing of a graph but its statistics (GraphStats), so the
// records are made without the graph files and without a GPU.
#pragma once

#include <string>
#include <vector>

#include "autotune/records.h"

namespace gsparse::autotune {

/// One graph of a sweep-data file: its name, split ("train" or "heldout") and family.
struct SweepDataGraph {
    std::string name, split, family;
};

/// The records of a sweep-data file (plain or gzip-compressed JSON): one per (graph, feature length,
/// point), features computed by this build from the stored statistics. Only g-SpMM operators
/// (`"op": "spmm <name>"`, e.g. "spmm copy_u_sum") are known. Throws gsparse::Error naming the file
/// and the field for malformed data, ScheduleError for points that do not parse.
std::vector<MeasurementRecord> records_from_sweep_data(const std::string &path,
                                                       std::vector<SweepDataGraph> *graphs = nullptr);

}  // namespace gsparse::autotune
