# ruff: noqa - written as the docstrings write it
# The examples of torch.nn's docstrings (torch 2.13) for the attention and Transformer
# modules, the normalisation layers GroupNorm, InstanceNorm1d/2d, LocalResponseNorm, RMSNorm
# and BatchNorm3d, the losses MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
# TripletMarginLoss, TripletMarginWithDistanceLoss, PoissonNLLLoss, GaussianNLLLoss,
# MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss and CTCLoss, and
# PairwiseDistance, PReLU, RReLU, Softmax2d, Bilinear and EmbeddingBag, each run in turn
# with one seed and its results printed (the docstrings show no output, or sizes only).
# The Transformer examples are made smaller (d_model 32 instead of 512, fewer layers and a
# smaller batch), as are the biggest inputs; the code is the docstrings' otherwise.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show(name, tensor):
    tensor = tensor.detach()
    print(f"{name}: shape {list(tensor.shape)} mean {tensor.float().mean().item():.4f} "
          f"abs-mean {tensor.float().abs().mean().item():.4f}")


# MultiheadAttention
embed_dim, num_heads = 16, 4
query, key, value = torch.randn(5, 2, embed_dim), torch.randn(7, 2, embed_dim), torch.randn(7, 2, embed_dim)
multihead_attn = nn.MultiheadAttention(embed_dim, num_heads)
attn_output, attn_output_weights = multihead_attn(query, key, value)
show("attn_output", attn_output)
show("attn_output_weights", attn_output_weights)

# Transformer
transformer_model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                   dim_feedforward=64)
src = torch.rand((10, 4, 32))
tgt = torch.rand((20, 4, 32))
out = transformer_model(src, tgt)
show("transformer", out)

# TransformerEncoderLayer
encoder_layer = nn.TransformerEncoderLayer(d_model=32, nhead=8, dim_feedforward=64)
src = torch.rand(10, 4, 32)
out = encoder_layer(src)
show("encoder_layer", out)
encoder_layer = nn.TransformerEncoderLayer(d_model=32, nhead=8, dim_feedforward=64, batch_first=True)
src = torch.rand(4, 10, 32)
out = encoder_layer(src)
show("encoder_layer batch_first", out)

# TransformerDecoderLayer
decoder_layer = nn.TransformerDecoderLayer(d_model=32, nhead=8, dim_feedforward=64)
memory = torch.rand(10, 4, 32)
tgt = torch.rand(20, 4, 32)
out = decoder_layer(tgt, memory)
show("decoder_layer", out)
decoder_layer = nn.TransformerDecoderLayer(d_model=32, nhead=8, dim_feedforward=64, batch_first=True)
memory = torch.rand(4, 10, 32)
tgt = torch.rand(4, 20, 32)
out = decoder_layer(tgt, memory)
show("decoder_layer batch_first", out)

# TransformerEncoder and TransformerDecoder
encoder_layer = nn.TransformerEncoderLayer(d_model=32, nhead=8, dim_feedforward=64)
transformer_encoder = nn.TransformerEncoder(encoder_layer, num_layers=3)
src = torch.rand(10, 4, 32)
out = transformer_encoder(src)
show("transformer_encoder", out)
decoder_layer = nn.TransformerDecoderLayer(d_model=32, nhead=8, dim_feedforward=64)
transformer_decoder = nn.TransformerDecoder(decoder_layer, num_layers=3)
memory = torch.rand(10, 4, 32)
tgt = torch.rand(20, 4, 32)
out = transformer_decoder(tgt, memory)
show("transformer_decoder", out)

# GroupNorm
input = torch.randn(20, 6, 10, 10)
for groups in (3, 6, 1):
    m = nn.GroupNorm(groups, 6)
    output = m(input)
    show(f"group_norm {groups}", output)

# InstanceNorm1d / InstanceNorm2d
m = nn.InstanceNorm1d(100)
m = nn.InstanceNorm1d(100, affine=True)
input = torch.randn(20, 100, 40)
output = m(input)
show("instance_norm1d", output)
m = nn.InstanceNorm2d(100)
m = nn.InstanceNorm2d(100, affine=True)
input = torch.randn(20, 100, 35, 45)
output = m(input)
show("instance_norm2d", output)

# LocalResponseNorm
lrn = nn.LocalResponseNorm(2)
signal_2d = torch.randn(32, 5, 24, 24)
signal_4d = torch.randn(16, 5, 7, 7, 7, 7)
output_2d = lrn(signal_2d)
output_4d = lrn(signal_4d)
show("lrn 2d", output_2d)
show("lrn 4d", output_4d)

# RMSNorm
rms_norm = nn.RMSNorm([2, 3])
input = torch.randn(2, 2, 3)
print(rms_norm(input))

# BatchNorm3d
m = nn.BatchNorm3d(100)
m = nn.BatchNorm3d(100, affine=False)
input = torch.randn(20, 100, 5, 6, 4)
output = m(input)
show("batch_norm3d", output)
show("batch_norm3d running_var", m.running_var)

# MarginRankingLoss
loss = nn.MarginRankingLoss()
input1 = torch.randn(3, requires_grad=True)
input2 = torch.randn(3, requires_grad=True)
target = torch.randn(3).sign()
output = loss(input1, input2, target)
output.backward()
print(output, input1.grad, input2.grad)

# HingeEmbeddingLoss
loss = nn.HingeEmbeddingLoss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.randn(3, 5).sign()
output = loss(input, target)
output.backward()
print(output, input.grad)

# CosineEmbeddingLoss
loss = nn.CosineEmbeddingLoss()
input1 = torch.randn(3, 5, requires_grad=True)
input2 = torch.randn(3, 5, requires_grad=True)
target = torch.ones(3)
output = loss(input1, input2, target)
output.backward()
print(output, input1.grad)

# TripletMarginLoss
triplet_loss = nn.TripletMarginLoss(margin=1.0, p=2, eps=1e-7)
anchor = torch.randn(100, 128, requires_grad=True)
positive = torch.randn(100, 128, requires_grad=True)
negative = torch.randn(100, 128, requires_grad=True)
output = triplet_loss(anchor, positive, negative)
output.backward()
print(output)
show("anchor.grad", anchor.grad)

# TripletMarginWithDistanceLoss
embedding = nn.Embedding(1000, 128)
anchor_ids = torch.randint(0, 1000, (1,))
positive_ids = torch.randint(0, 1000, (1,))
negative_ids = torch.randint(0, 1000, (1,))
anchor = embedding(anchor_ids)
positive = embedding(positive_ids)
negative = embedding(negative_ids)
triplet_loss = \
    nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance())
output = triplet_loss(anchor, positive, negative)
output.backward()
print(output)


def l_infinity(x1, x2):
    return torch.max(torch.abs(x1 - x2), dim=1).values


anchor = embedding(anchor_ids)
positive = embedding(positive_ids)
negative = embedding(negative_ids)
triplet_loss = (
    nn.TripletMarginWithDistanceLoss(distance_function=l_infinity, margin=1.5))
output = triplet_loss(anchor, positive, negative)
output.backward()
print(output)
anchor = embedding(anchor_ids)
positive = embedding(positive_ids)
negative = embedding(negative_ids)
triplet_loss = (
    nn.TripletMarginWithDistanceLoss(
        distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y)))
output = triplet_loss(anchor, positive, negative)
output.backward()
print(output)
show("embedding.weight.grad", embedding.weight.grad)

# PoissonNLLLoss
loss = nn.PoissonNLLLoss()
log_input = torch.randn(5, 2, requires_grad=True)
target = torch.randn(5, 2)
output = loss(log_input, target)
output.backward()
print(output, log_input.grad)

# GaussianNLLLoss
loss = nn.GaussianNLLLoss()
input = torch.randn(5, 2, requires_grad=True)
target = torch.randn(5, 2)
var = torch.ones(5, 2, requires_grad=True)  # heteroscedastic
output = loss(input, target, var)
output.backward()
print(output, var.grad)
loss = nn.GaussianNLLLoss()
input = torch.randn(5, 2, requires_grad=True)
target = torch.randn(5, 2)
var = torch.ones(5, 1, requires_grad=True)  # homoscedastic
output = loss(input, target, var)
output.backward()
print(output, var.grad)

# MultiLabelMarginLoss
loss = nn.MultiLabelMarginLoss()
x = torch.FloatTensor([[0.1, 0.2, 0.4, 0.8]])
# for target y, only consider labels 3 and 0, not after label -1
y = torch.LongTensor([[3, 0, -1, 1]])
# 0.25 * ((1-(0.1-0.2)) + (1-(0.1-0.4)) + (1-(0.8-0.2)) + (1-(0.8-0.4)))
print(loss(x, y))

# MultiLabelSoftMarginLoss
loss = nn.MultiLabelSoftMarginLoss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.empty(3, 5).random_(2)
output = loss(input, target)
output.backward()
print(output, input.grad)

# MultiMarginLoss
loss = nn.MultiMarginLoss()
x = torch.tensor([[0.1, 0.2, 0.4, 0.8]])
y = torch.tensor([3])
# 0.25 * ((1-(0.8-0.1)) + (1-(0.8-0.2)) + (1-(0.8-0.4)))
print(loss(x, y))

# CTCLoss: targets padded
T = 50  # Input sequence length
C = 20  # Number of classes (including blank)
N = 16  # Batch size
S = 30  # Target sequence length of longest target in batch (padding length)
S_min = 10  # Minimum target length, for demonstration purposes
input = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
target = torch.randint(low=1, high=C, size=(N, S), dtype=torch.long)
input_lengths = torch.full(size=(N,), fill_value=T, dtype=torch.long)
target_lengths = torch.randint(low=S_min, high=S, size=(N,), dtype=torch.long)
ctc_loss = nn.CTCLoss()
loss = ctc_loss(input, target, input_lengths, target_lengths)
loss.backward()
print(loss)
show("ctc input.grad", input.grad)

# CTCLoss: targets un-padded
T = 50  # Input sequence length
C = 20  # Number of classes (including blank)
N = 16  # Batch size
input = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
input_lengths = torch.full(size=(N,), fill_value=T, dtype=torch.long)
target_lengths = torch.randint(low=1, high=T, size=(N,), dtype=torch.long)
target = torch.randint(low=1, high=C, size=(sum(target_lengths),), dtype=torch.long)
ctc_loss = nn.CTCLoss()
loss = ctc_loss(input, target, input_lengths, target_lengths)
loss.backward()
print(loss)

# CTCLoss: un-batched
T = 50  # Input sequence length
C = 20  # Number of classes (including blank)
input = torch.randn(T, C).log_softmax(1).detach().requires_grad_()
input_lengths = torch.tensor(T, dtype=torch.long)
target_lengths = torch.randint(low=1, high=T, size=(), dtype=torch.long)
target = torch.randint(low=1, high=C, size=(target_lengths,), dtype=torch.long)
ctc_loss = nn.CTCLoss()
loss = ctc_loss(input, target, input_lengths, target_lengths)
loss.backward()
print(loss)

# PairwiseDistance
pdist = nn.PairwiseDistance(p=2)
input1 = torch.randn(100, 128)
input2 = torch.randn(100, 128)
output = pdist(input1, input2)
show("pairwise_distance", output)

# PReLU, RReLU, Softmax2d
m = nn.PReLU()
input = torch.randn(2)
output = m(input)
print(output)
m = nn.RReLU(0.1, 0.3)
input = torch.randn(2)
output = m(input)
print(output)
m = nn.Softmax2d()
# you softmax over the 2nd dimension
input = torch.randn(2, 3, 12, 13)
output = m(input)
show("softmax2d", output)

# Bilinear
m = nn.Bilinear(20, 30, 40)
input1 = torch.randn(128, 20)
input2 = torch.randn(128, 30)
output = m(input1, input2)
print(output.size())
show("bilinear", output)

# EmbeddingBag
embedding_sum = nn.EmbeddingBag(10, 3, mode='sum')
input = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9], dtype=torch.long)
offsets = torch.tensor([0, 4], dtype=torch.long)
print(embedding_sum(input, offsets))
embedding_sum = nn.EmbeddingBag(10, 3, mode='sum', padding_idx=2)
input = torch.tensor([2, 2, 2, 2, 4, 3, 2, 9], dtype=torch.long)
offsets = torch.tensor([0, 4], dtype=torch.long)
print(embedding_sum(input, offsets))
embedding = nn.Embedding(10, 3, padding_idx=2)
embedding_sum = nn.EmbeddingBag.from_pretrained(
    embedding.weight,
    padding_idx=embedding.padding_idx,
    mode='sum')
print(embedding_sum(input, offsets))
