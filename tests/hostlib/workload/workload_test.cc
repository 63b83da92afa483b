#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "hostlib/workload/model_layers.h"
#include "hostlib/workload/synthetic_gradients.h"

namespace swemu {
namespace {

TEST(ModelLayersTest, BundledModelsMatchTheirStatedTotals) {
  // Totals from the "== model: ... total_params=" headers of configs/models/model_layers.txt.
  EXPECT_EQ(BundledModel("VGG16")->TotalParams(), 138357544u);
  EXPECT_EQ(BundledModel("AlexNet")->TotalParams(), 61100840u);
  auto resnet = BundledModel("resnet-50");
  ASSERT_TRUE(resnet.ok()) << resnet.status().message();
  EXPECT_EQ(resnet->TotalParams(), 25557032u);
  EXPECT_EQ(resnet->layers.size(), 54u);
  EXPECT_EQ(resnet->layers.front().name, "conv1");
  EXPECT_EQ(resnet->layers.front().params, 9536u);
  // torchvision's inception_v3 without the aux classifier: 23,834,568 parameters.
  auto inception = BundledModel("inception-v3");
  ASSERT_TRUE(inception.ok()) << inception.status().message();
  EXPECT_EQ(inception->TotalParams(), 23834568u);
  EXPECT_EQ(inception->layers.size(), 95u);
  EXPECT_EQ(inception->layers.front().params, 928u);      // 3x3x3x32 + BN's 64
  EXPECT_EQ(inception->layers.back().params, 2049000u);   // fc 2048 -> 1000
}

TEST(ModelLayersTest, UnknownModelNamesTheBundledOnes) {
  auto model = BundledModel("gpt5");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("ResNet50"), std::string::npos);
}

TEST(ModelLayersTest, BadLinesAreNamed) {
  EXPECT_FALSE(ParseModelLayers("  conv1 params= 12\n").ok());  // layer before a model
  auto bad = ParseModelLayers("== M: x\n  conv1 params= 1x2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  EXPECT_FALSE(ParseModelLayers("== M: x\n").ok());  // no layers
  auto ok = ParseModelLayers("# c\n== M: x\n  a params= 1,000 (w)\n  b params=7\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)[0].TotalParams(), 1007u);
}

TEST(SyntheticGradientsTest, DeterministicPerWorkerAndNormallyDistributed) {
  GradientSource source{.seed = 7, .stddev = 0.01f};
  std::vector<float> a(100001), b(100001), c(100001);
  FillGradients(source, 1, 2, 3, a);
  FillGradients(source, 1, 2, 3, b);
  FillGradients(source, 2, 2, 3, c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double sum = 0, sq = 0;
  for (float v : a) {
    sum += v;
    sq += double{v} * v;
  }
  const double mean = sum / a.size();
  const double sd = std::sqrt(sq / a.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 1e-4);
  EXPECT_NEAR(sd, 0.01, 2e-4);
}

}  // namespace
}  // namespace swemu

namespace swemu {
namespace {

// Every layer in partitions of at most kPartitionFloats, covering it exactly, in order.
TEST(PartitionLayersTest, SplitsOnlyLayersLargerThanAPartitionAndCoversEveryParameter) {
  const Result<ModelLayers> vgg = BundledModel("vgg16");
  ASSERT_TRUE(vgg.ok());
  const std::vector<LayerPartition> parts = PartitionLayers(*vgg);
  uint64_t total = 0;
  std::vector<uint64_t> per_layer(vgg->layers.size(), 0);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LE(parts[i].count, kPartitionFloats);
    EXPECT_GT(parts[i].count, 0u);
    EXPECT_EQ(parts[i].offset, per_layer[parts[i].layer]);  // contiguous within the layer
    if (i > 0) {
      EXPECT_GE(parts[i].layer, parts[i - 1].layer);
    }
    per_layer[parts[i].layer] += parts[i].count;
    total += parts[i].count;
  }
  for (std::size_t l = 0; l < per_layer.size(); ++l) EXPECT_EQ(per_layer[l], vgg->layers[l].params);
  EXPECT_EQ(total, vgg->TotalParams());
  EXPECT_GT(parts.size(), vgg->layers.size());  // VGG16's fc6 (102.8 M) is split
}

}  // namespace
}  // namespace swemu
