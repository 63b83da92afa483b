// GOAT's GINA problem and its LP: distances from a graph, worker classes, sub-model splitting,
// Eq. 1 solved (not Eq. 4: the reading notes' counter-example, where the two disagree), the
// class-reduced LP as good as the full one, bad problems named.
#include "hostlib/goat/gina.h"

#include <gtest/gtest.h>

#include "hostlib/goat/gina_lp.h"
#include "hostlib/goat/krgs.h"

namespace swemu {
namespace {

// The notes' counter-example: one spine, leaves L1, L2, L4; the PS on L2, W1 and W2 on L1, W3
// and W4 on L4; only L1 and L4 programmable, one slot each; one sub-model of one slot.
GinaGraph CounterExample() {
  GinaGraph g;
  g.Add({"spine", GinaNode::Kind::kSwitch, 0});
  g.Add({"L1", GinaNode::Kind::kSwitch, 1});
  g.Add({"L2", GinaNode::Kind::kSwitch, 0});
  g.Add({"L4", GinaNode::Kind::kSwitch, 1});
  g.Add({"ps", GinaNode::Kind::kPs, 0});
  for (const char* w : {"W1", "W2", "W3", "W4"}) g.Add({w, GinaNode::Kind::kWorker, 0});
  for (const char* l : {"L1", "L2", "L4"}) EXPECT_TRUE(g.Link(l, "spine").ok());
  EXPECT_TRUE(g.Link("ps", "L2").ok());
  EXPECT_TRUE(g.Link("W1", "L1").ok());
  EXPECT_TRUE(g.Link("W2", "L1").ok());
  EXPECT_TRUE(g.Link("W3", "L4").ok());
  EXPECT_TRUE(g.Link("W4", "L4").ok());
  return g;
}

TEST(Gina, DistancesAndClassesComeFromTheGraph) {
  Result<GinaProblem> p = BuildGinaProblem(CounterExample(), {1});
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->switch_names, (std::vector<std::string>{"L1", "L4"}));
  EXPECT_EQ(p->switch_to_ps, (std::vector<uint32_t>{3, 3}));
  EXPECT_EQ(p->worker_to_ps, (std::vector<uint32_t>{4, 4, 4, 4}));
  EXPECT_EQ(p->worker_to_switch[0], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(p->worker_to_switch[3], (std::vector<uint32_t>{3, 1}));
  const std::vector<WorkerClass> classes = WorkerClasses(*p);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].workers, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(classes[1].workers, (std::vector<uint32_t>{2, 3}));
}

TEST(Gina, Eq1IsSolvedAndEq4WouldPreferAnotherPlan) {
  Result<GinaProblem> p = BuildGinaProblem(CounterExample(), {1});
  ASSERT_TRUE(p.ok());
  Result<GinaLpSolution> lp = SolveGinaLp(*p);
  ASSERT_TRUE(lp.ok()) << lp.message();
  EXPECT_NEAR(lp->eq1, 10, 1e-9);  // W1, W2 at L1 and W3, W4 at L4
  Result<GinaPlan> plan = RoundKrgs(*p, *lp, 1);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->node[0], (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_NEAR(GinaPlanEq1(*p, *plan), 10, 1e-9);
  EXPECT_NEAR(GinaPlanEq4(*p, *plan), 6, 1e-9);
  // Everyone at L1: more traffic (11) but a larger Eq. 4 "saving" (9).
  GinaPlan all_l1;
  all_l1.node = {{0, 0, 0, 0}};
  all_l1.Derive(*p);
  EXPECT_NEAR(GinaPlanEq1(*p, all_l1), 11, 1e-9);
  EXPECT_NEAR(GinaPlanEq4(*p, all_l1), 9, 1e-9);
  EXPECT_EQ(GinaPlanPsSlots(*p, *plan), 2u);  // two switch aggregates
}

TEST(Gina, TheClassLpIsAsGoodAsTheFullOne) {
  // 4 leaves x 4 servers, 2 spines, two leaves and a spine programmable, tight memory.
  const GinaGraph g = LeafSpineGraph(2, 4, 16, {"leaf0", "leaf1", "spine0"}, 6);
  Result<GinaProblem> p = BuildGinaProblem(g, {2, 3, 1, 4, 2, 2});
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ(p->num_workers(), 15u);
  Result<GinaLpSolution> reduced = SolveGinaLp(*p, true);
  Result<GinaLpSolution> full = SolveGinaLp(*p, false);
  ASSERT_TRUE(reduced.ok() && full.ok());
  EXPECT_LT(reduced->classes.size(), full->classes.size());
  EXPECT_LT(reduced->columns, full->columns);
  EXPECT_NEAR(reduced->eq1, full->eq1, 1e-6);
  GinaPlan all_ps;
  all_ps.node.assign(p->submodels.size(), std::vector<int32_t>(15, kGinaPs));
  all_ps.Derive(*p);
  EXPECT_LT(reduced->eq1, GinaPlanEq1(*p, all_ps));  // in-network aggregation pays
}

TEST(Gina, SubmodelsLargerThanEveryMemoryAreSplit) {
  Result<std::vector<uint64_t>> split = SplitSubmodels({10, 3, 7}, 4);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(*split, (std::vector<uint64_t>{4, 3, 3, 3, 4, 3}));  // 10: 4 3 3; 3; 7: 4 3
  EXPECT_FALSE(SplitSubmodels({1}, 0).ok());
  Result<GinaProblem> p = BuildGinaProblem(CounterExample(), {2});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("split it"), std::string::npos) << p.message();
}

TEST(Gina, BadGraphsAreNamed) {
  GinaGraph g = CounterExample();
  g.Add({"W9", GinaNode::Kind::kWorker, 0});  // not linked
  Result<GinaProblem> p = BuildGinaProblem(g, {1});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.message().find("W9 cannot reach the PS"), std::string::npos) << p.message();
  g = CounterExample();
  g.Add({"ps", GinaNode::Kind::kPs, 0});
  EXPECT_FALSE(BuildGinaProblem(g, {1}).ok());
  EXPECT_FALSE(g.Link("L1", "nowhere").ok());
  EXPECT_FALSE(BuildGinaProblem(CounterExample(), {}).ok());
  EXPECT_FALSE(BuildGinaProblem(CounterExample(), {0}).ok());
}

}  // namespace
}  // namespace swemu
