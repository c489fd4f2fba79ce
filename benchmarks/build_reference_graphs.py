"""Build ``reference_graphs/*.json``: the sciflow reference set v1 (60 canonical graphs).

Each item is a real published method, hand-written below as a list of node labels (in
node order; ids become ``n1``..``nK``), a list of directed edges over those labels, and
optional groups. Edge notation::

    "A -> B"                 one edge
    "A -> B -> C"            a chain: A -> B and B -> C
    "A -> B | label"         one edge with a label (the text written on the arrow)
    "A -> B | label | dashed"  ... and a style;  "A -> B || dashed": style, no label
    "A -> B -> C | label"    a chain whose last arrow (B -> C) carries the label

Labels are short (1-5 words), unique within an item, and follow the paper's figure where
the method has one (repeated blocks get a distinguishing suffix, since labels must be
unique). Edges are real data or control flow; where a figure is ambiguous the edge is left
out, as in the annotation protocol of ``/work/shared/dev-data/README.md``.

The script computes ``meta.difficulty`` with :func:`sciflow.bench.difficulty.difficulty` and the
``prompt`` with :func:`sciflow.bench.prompts.build_prompt`, then writes the files with
:meth:`DiagramGraph.save`. Output is deterministic: running it twice gives byte-identical
files. Usage::

    .venv/bin/python benchmarks/build_reference_graphs.py [--out reference_graphs] [--prune]

``--prune`` deletes ``*.json`` files in the output folder that no item produced.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from sciflow.bench.difficulty import complexity_features, complexity_score, difficulty, is_linear
from sciflow.bench.prompts import build_prompt
from sciflow.format.graph import DiagramGraph

ROOT = Path(__file__).resolve().parents[1]
ORIGIN = "sciflow reference set v1"

CV = "computer vision"
NLP = "natural language processing"
ML = "machine learning"
IC = "integrated circuits"
ROB = "robotics"
AREAS = (CV, NLP, ML, IC, ROB)
PER_AREA = 12
LR = "left-to-right"
TB = "top-to-bottom"
MAX_LABEL_WORDS = 5


@dataclass(frozen=True)
class G:
    """A group: ``members`` are node labels; ``parent`` is another group's label."""

    label: str
    members: tuple[str, ...]
    parent: str | None = None


@dataclass(frozen=True)
class Item:
    id: str
    area: str
    title: str
    year: int
    arxiv: str
    layout: str
    description: str
    nodes: tuple[str, ...]
    edges: tuple[str, ...]
    groups: tuple[G, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)  # "doi" / "reference" when arxiv == ""


ITEMS: list[Item] = []


def item(
    id: str,
    area: str,
    title: str,
    year: int,
    arxiv: str,
    layout: str,
    description: str,
    nodes: list[str],
    edges: list[str],
    groups: list[G] | None = None,
    **extra: str,
) -> None:
    ITEMS.append(
        Item(
            id=id,
            area=area,
            title=title,
            year=year,
            arxiv=arxiv,
            layout=layout,
            description=" ".join(description.split()),
            nodes=tuple(nodes),
            edges=tuple(edges),
            groups=tuple(groups or ()),
            extra=dict(extra),
        )
    )


# =============================================================== computer vision
item(
    "cv_detr", CV, "End-to-End Object Detection with Transformers", 2020, "2005.12872", LR,
    """DETR casts object detection as direct set prediction. A CNN backbone turns the image into
    a set of image features, which are added to a positional encoding and fed to a transformer
    encoder. A transformer decoder attends to the encoded features with a small fixed set of
    learned object queries. A shared feed-forward network (FFN) maps every decoder output either
    to a class and box or to a 'no object' label; training matches predictions to ground truth
    with a bipartite matching loss.""",
    ["image", "CNN", "set of image features", "positional encoding", "⊕",
     "transformer encoder", "object queries", "transformer decoder", "FFN", "class, box",
     "no object"],
    ["image -> CNN -> set of image features -> ⊕ -> transformer encoder -> transformer decoder",
     "positional encoding -> ⊕",
     "object queries -> transformer decoder",
     "transformer decoder -> FFN -> class, box",
     "FFN -> no object"],
    [G("backbone", ("CNN", "set of image features", "positional encoding", "⊕")),
     G("encoder", ("transformer encoder",)),
     G("decoder", ("object queries", "transformer decoder")),
     G("prediction heads", ("FFN", "class, box", "no object"))],
)
item(
    "cv_mask_rcnn", CV, "Mask R-CNN", 2017, "1703.06870", LR,
    """Mask R-CNN extends Faster R-CNN with a branch that predicts an object mask for every region
    of interest; this item shows its ResNet-FPN variant. The bottom-up ResNet stages produce
    feature maps C2-C5, and the top-down FPN pathway upsamples coarser maps 2x, adds 1x1 lateral
    projections of C2-C5, and smooths each sum with a 3x3 convolution into pyramid levels P2-P5,
    with P6 subsampled from P5. A Region Proposal Network shared across levels proposes regions,
    and RoIAlign pools an aligned feature for each proposal from the pyramid. A box head of two
    fully connected layers predicts the class and box, while a parallel mask head of four
    convolutions and a deconvolution predicts a 28x28 binary mask.""",
    ["Image", "conv1 (C1)", "res2 (C2)", "res3 (C3)", "res4 (C4)", "res5 (C5)",
     "1x1 conv C5", "1x1 conv C4", "1x1 conv C3", "1x1 conv C2", "2x up M5", "2x up M4",
     "2x up M3", "⊕ M4", "⊕ M3", "⊕ M2", "P5", "P4", "P3", "P2", "P6",
     "Region Proposal Network", "Region Proposals", "RoIAlign", "Box Head (2× FC)", "Class",
     "Box Regression", "Mask Head (4× conv)", "Deconv 2×", "Mask 28×28"],
    ["Image -> conv1 (C1) -> res2 (C2) -> res3 (C3) -> res4 (C4) -> res5 (C5) -> 1x1 conv C5",
     "res4 (C4) -> 1x1 conv C4 -> ⊕ M4",
     "res3 (C3) -> 1x1 conv C3 -> ⊕ M3",
     "res2 (C2) -> 1x1 conv C2 -> ⊕ M2",
     "1x1 conv C5 -> 2x up M5 -> ⊕ M4 -> 2x up M4 -> ⊕ M3 -> 2x up M3 -> ⊕ M2",
     "1x1 conv C5 -> P5 | 3x3 conv",
     "⊕ M4 -> P4 | 3x3 conv",
     "⊕ M3 -> P3 | 3x3 conv",
     "⊕ M2 -> P2 | 3x3 conv",
     "P5 -> P6 | subsample",
     "P2 -> Region Proposal Network",
     "P3 -> Region Proposal Network",
     "P4 -> Region Proposal Network",
     "P5 -> Region Proposal Network",
     "P6 -> Region Proposal Network",
     "Region Proposal Network -> Region Proposals -> RoIAlign",
     "P2 -> RoIAlign",
     "P3 -> RoIAlign",
     "P4 -> RoIAlign",
     "P5 -> RoIAlign",
     "RoIAlign -> Box Head (2× FC) -> Class",
     "Box Head (2× FC) -> Box Regression",
     "RoIAlign -> Mask Head (4× conv) -> Deconv 2× -> Mask 28×28"],
    [G("Bottom-up (ResNet)", ("conv1 (C1)", "res2 (C2)", "res3 (C3)", "res4 (C4)",
                              "res5 (C5)")),
     G("Top-down (FPN)", ("1x1 conv C5", "1x1 conv C4", "1x1 conv C3", "1x1 conv C2",
                          "2x up M5", "2x up M4", "2x up M3", "⊕ M4", "⊕ M3", "⊕ M2", "P5",
                          "P4", "P3", "P2", "P6")),
     G("Per-RoI Heads", ("Box Head (2× FC)", "Class", "Box Regression", "Mask Head (4× conv)",
                         "Deconv 2×", "Mask 28×28"))],
)
item(
    "cv_vit", CV,
    "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale", 2020,
    "2010.11929", LR,
    """The Vision Transformer (ViT) applies a standard Transformer encoder directly to image
    patches. The image is split into fixed-size patches, which are flattened and mapped to tokens
    by a linear projection. An extra learnable [class] embedding is prepended and position
    embeddings are added to form the patch + position embedding sequence. The Transformer encoder
    processes the sequence, and an MLP head reads the [class] token to predict the class.""",
    ["Image", "Image Patches", "Linear Projection of Flattened Patches",
     "Extra learnable [class] embedding", "Position Embeddings", "Patch + Position Embedding",
     "Transformer Encoder", "MLP Head", "Class"],
    ["Image -> Image Patches -> Linear Projection of Flattened Patches -> "
     "Patch + Position Embedding -> Transformer Encoder -> MLP Head -> Class",
     "Extra learnable [class] embedding -> Patch + Position Embedding",
     "Position Embeddings -> Patch + Position Embedding"],
)
item(
    "cv_unet", CV, "U-Net: Convolutional Networks for Biomedical Image Segmentation", 2015,
    "1505.04597", LR,
    """U-Net is an encoder-decoder network for biomedical image segmentation. The contracting
    path applies blocks of two 3x3 convolutions followed by 2x2 max pooling, doubling the channels
    from 64 to 512 before a 1024-channel bottleneck. The expansive path upsamples with 2x2
    up-convolutions and halves the channels at every level. Skip connections copy and crop the
    encoder feature maps into the matching decoder block. A final 1x1 convolution maps the
    features to the output segmentation map.""",
    ["Input Image Tile", "Encoder Block 1 (64)", "Encoder Block 2 (128)",
     "Encoder Block 3 (256)", "Encoder Block 4 (512)", "Bottleneck (1024)",
     "Decoder Block 4 (512)", "Decoder Block 3 (256)", "Decoder Block 2 (128)",
     "Decoder Block 1 (64)", "1x1 Conv", "Output Segmentation Map"],
    ["Input Image Tile -> Encoder Block 1 (64)",
     "Encoder Block 1 (64) -> Encoder Block 2 (128) | max pool 2x2",
     "Encoder Block 2 (128) -> Encoder Block 3 (256) | max pool 2x2",
     "Encoder Block 3 (256) -> Encoder Block 4 (512) | max pool 2x2",
     "Encoder Block 4 (512) -> Bottleneck (1024) | max pool 2x2",
     "Bottleneck (1024) -> Decoder Block 4 (512) | up-conv 2x2",
     "Decoder Block 4 (512) -> Decoder Block 3 (256) | up-conv 2x2",
     "Decoder Block 3 (256) -> Decoder Block 2 (128) | up-conv 2x2",
     "Decoder Block 2 (128) -> Decoder Block 1 (64) | up-conv 2x2",
     "Decoder Block 1 (64) -> 1x1 Conv -> Output Segmentation Map",
     "Encoder Block 1 (64) -> Decoder Block 1 (64) | copy and crop",
     "Encoder Block 2 (128) -> Decoder Block 2 (128) | copy and crop",
     "Encoder Block 3 (256) -> Decoder Block 3 (256) | copy and crop",
     "Encoder Block 4 (512) -> Decoder Block 4 (512) | copy and crop"],
    [G("Contracting Path", ("Encoder Block 1 (64)", "Encoder Block 2 (128)",
                            "Encoder Block 3 (256)", "Encoder Block 4 (512)")),
     G("Expansive Path", ("Decoder Block 4 (512)", "Decoder Block 3 (256)",
                          "Decoder Block 2 (128)", "Decoder Block 1 (64)"))],
)
item(
    "cv_nerf", CV, "NeRF: Representing Scenes as Neural Radiance Fields for View Synthesis",
    2020, "2003.08934", LR,
    """NeRF represents a scene as a continuous 5D function learned by an MLP. Camera rays are
    marched through the scene, giving sampled 3D points and a viewing direction for each ray. Both
    are mapped by a positional encoding and passed to the MLP F_Θ, which outputs a color and a
    volume density per point. Volume rendering composites these along each ray into a rendered
    pixel color. A rendering loss against the ground-truth pixel is backpropagated to optimize the
    MLP.""",
    ["Camera Rays", "Sampled Points (x, y, z)", "Viewing Direction (θ, φ)",
     "Positional Encoding", "MLP F_Θ", "Color and Density (RGB, σ)", "Volume Rendering",
     "Rendered Pixel Color", "Ground Truth Pixel", "Rendering Loss"],
    ["Camera Rays -> Sampled Points (x, y, z) -> Positional Encoding",
     "Camera Rays -> Viewing Direction (θ, φ) -> Positional Encoding",
     "Positional Encoding -> MLP F_Θ -> Color and Density (RGB, σ) -> Volume Rendering -> "
     "Rendered Pixel Color -> Rendering Loss",
     "Ground Truth Pixel -> Rendering Loss",
     "Rendering Loss -> MLP F_Θ | gradient | dashed"],
)
item(
    "cv_clip", CV, "Learning Transferable Visual Models From Natural Language Supervision", 2021,
    "2103.00020", LR,
    """CLIP learns image and text representations jointly from image-caption pairs. In
    contrastive pre-training, a text encoder and an image encoder embed a batch of captions and
    images, and a similarity matrix of their dot products is trained so that matching pairs score
    highest. To build a zero-shot classifier, class names are inserted into a prompt template
    such as 'A photo of a {object}.' and embedded by the pre-trained text encoder. For zero-shot
    prediction, the image encoder embeds a test image, its similarities to every class embedding
    are computed, and the best-matching caption is the prediction.""",
    ["Text", "Text Encoder", "Text Embeddings T1…TN", "Image", "Image Encoder",
     "Image Embeddings I1…IN", "Similarity Matrix", "plane, car, dog, …, bird",
     "A photo of a {object}.", "Zero-shot Text Encoder", "Class Embeddings T1…TN",
     "Test Image", "Zero-shot Image Encoder", "Image Embedding I1", "Similarities I1·T1…I1·TN",
     "A photo of a dog."],
    ["Text -> Text Encoder -> Text Embeddings T1…TN -> Similarity Matrix",
     "Image -> Image Encoder -> Image Embeddings I1…IN -> Similarity Matrix",
     "plane, car, dog, …, bird -> A photo of a {object}. -> Zero-shot Text Encoder -> "
     "Class Embeddings T1…TN -> Similarities I1·T1…I1·TN",
     "Test Image -> Zero-shot Image Encoder -> Image Embedding I1 -> Similarities I1·T1…I1·TN",
     "Similarities I1·T1…I1·TN -> A photo of a dog.",
     "Text Encoder -> Zero-shot Text Encoder | shared weights | dashed",
     "Image Encoder -> Zero-shot Image Encoder | shared weights | dashed"],
    [G("(1) Contrastive pre-training", ("Text", "Text Encoder", "Text Embeddings T1…TN", "Image",
                                        "Image Encoder", "Image Embeddings I1…IN",
                                        "Similarity Matrix")),
     G("(2) Create dataset classifier from label text",
       ("plane, car, dog, …, bird", "A photo of a {object}.", "Zero-shot Text Encoder",
        "Class Embeddings T1…TN")),
     G("(3) Use for zero-shot prediction",
       ("Test Image", "Zero-shot Image Encoder", "Image Embedding I1",
        "Similarities I1·T1…I1·TN", "A photo of a dog."))],
)
item(
    "cv_resnet_block", CV, "Deep Residual Learning for Image Recognition", 2015, "1512.03385", TB,
    """A residual block learns a residual function F(x) instead of a direct mapping. The input x
    passes through a weight layer, a ReLU and a second weight layer to produce F(x). An identity
    shortcut carries x around the two layers, and the two are summed element-wise. A final ReLU
    is applied to F(x) + x to give the block output.""",
    ["x", "weight layer 1", "ReLU 1", "weight layer 2", "⊕", "ReLU 2"],
    ["x -> weight layer 1 -> ReLU 1 -> weight layer 2 -> ⊕ | F(x)",
     "x -> ⊕ | identity",
     "⊕ -> ReLU 2"],
)
item(
    "cv_yolo", CV, "You Only Look Once: Unified, Real-Time Object Detection", 2015, "1506.02640",
    LR,
    """YOLO detects objects with a single network evaluation per image. The input image is first
    resized to 448x448. One convolutional network then predicts, for every cell of an S x S grid,
    bounding boxes with confidences and class probabilities. Non-max suppression removes
    duplicate boxes to produce the final detections.""",
    ["Input Image", "Resize Image", "Convolutional Network", "Non-max Suppression",
     "Detections"],
    ["Input Image -> Resize Image -> Convolutional Network -> Non-max Suppression -> Detections"],
)
item(
    "cv_swin", CV, "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows", 2021,
    "2103.14030", LR,
    """Swin Transformer builds a hierarchical feature pyramid with attention computed inside
    local, shifted windows. Patch partition splits the image into 4x4 patches, and a linear
    embedding projects them before the Stage 1 Swin Transformer blocks. Each later stage starts
    with a patch merging layer that halves the resolution and doubles the channels, followed by
    Swin Transformer blocks that alternate regular and shifted window attention. The Swin-T
    configuration uses 2, 2, 6 and 2 blocks in the four stages.""",
    ["Images", "Patch Partition", "Linear Embedding", "Stage 1 Swin Blocks ×2",
     "Stage 2 Patch Merging", "Stage 2 Swin Blocks ×2", "Stage 3 Patch Merging",
     "Stage 3 Swin Blocks ×6", "Stage 4 Patch Merging", "Stage 4 Swin Blocks ×2"],
    ["Images -> Patch Partition -> Linear Embedding -> Stage 1 Swin Blocks ×2 -> "
     "Stage 2 Patch Merging -> Stage 2 Swin Blocks ×2 -> Stage 3 Patch Merging -> "
     "Stage 3 Swin Blocks ×6 -> Stage 4 Patch Merging -> Stage 4 Swin Blocks ×2"],
    [G("Stage 1", ("Linear Embedding", "Stage 1 Swin Blocks ×2")),
     G("Stage 2", ("Stage 2 Patch Merging", "Stage 2 Swin Blocks ×2")),
     G("Stage 3", ("Stage 3 Patch Merging", "Stage 3 Swin Blocks ×6")),
     G("Stage 4", ("Stage 4 Patch Merging", "Stage 4 Swin Blocks ×2"))],
)
item(
    "cv_latent_diffusion", CV, "High-Resolution Image Synthesis with Latent Diffusion Models",
    2021, "2112.10752", LR,
    """Latent diffusion models run the diffusion process in the latent space of a pretrained
    autoencoder. The encoder ℰ maps an image x to a latent z, and the forward diffusion process
    noises it into z_T. A denoising U-Net ε_θ removes noise step by step, repeated T times, to
    produce a denoised latent that the decoder 𝒟 maps back to pixel space. Conditioning inputs such
    as semantic maps, text, representations or images are embedded by a domain-specific encoder
    τ_θ and injected into the U-Net through cross-attention layers.""",
    ["x", "Encoder ℰ", "Latent z", "Diffusion Process", "Noisy Latent z_T",
     "Denoising U-Net ε_θ", "Cross-Attention (Q, K, V)", "Denoised Latent z_{t−1}",
     "Decoder 𝒟", "Output x̃", "Semantic Map", "Text", "Representations", "Images",
     "Conditioning Encoder τ_θ"],
    ["x -> Encoder ℰ -> Latent z -> Diffusion Process -> Noisy Latent z_T -> Denoising U-Net ε_θ",
     "Denoising U-Net ε_θ -> Denoised Latent z_{t−1}",
     "Denoised Latent z_{t−1} -> Denoising U-Net ε_θ | ×(T−1) | dashed",
     "Denoised Latent z_{t−1} -> Decoder 𝒟 -> Output x̃",
     "Semantic Map -> Conditioning Encoder τ_θ",
     "Text -> Conditioning Encoder τ_θ",
     "Representations -> Conditioning Encoder τ_θ",
     "Images -> Conditioning Encoder τ_θ",
     "Conditioning Encoder τ_θ -> Cross-Attention (Q, K, V) -> Denoising U-Net ε_θ"],
    [G("Pixel Space", ("x", "Encoder ℰ", "Decoder 𝒟", "Output x̃")),
     G("Latent Space", ("Latent z", "Diffusion Process", "Noisy Latent z_T",
                        "Denoising U-Net ε_θ", "Cross-Attention (Q, K, V)",
                        "Denoised Latent z_{t−1}")),
     G("Conditioning", ("Semantic Map", "Text", "Representations", "Images",
                        "Conditioning Encoder τ_θ"))],
)
item(
    "cv_dino", CV, "Emerging Properties in Self-Supervised Vision Transformers", 2021,
    "2104.14294", LR,
    """DINO is self-distillation with no labels. Two random augmentations x1 and x2 of the same
    image go to a student network g_θs and a teacher network g_θt with the same architecture. The
    teacher output is centered and sharpened by a softmax, and a stop-gradient blocks gradients
    through the teacher. The student softmax output p1 is trained to match the teacher output p2
    with the cross-entropy loss −p2 log p1. The teacher weights are an exponential moving average
    (EMA) of the student weights.""",
    ["Input Image x", "View x1", "View x2", "Student g_θs", "Teacher g_θt", "Student Softmax",
     "Centering", "Teacher Softmax", "Stop-Gradient (sg)", "Loss −p2 log p1"],
    ["Input Image x -> View x1 -> Student g_θs -> Student Softmax -> Loss −p2 log p1 | p1",
     "Input Image x -> View x2 -> Teacher g_θt -> Centering -> Teacher Softmax -> "
     "Stop-Gradient (sg)",
     "Stop-Gradient (sg) -> Loss −p2 log p1 | p2",
     "Student g_θs -> Teacher g_θt | ema | dashed"],
)
item(
    "cv_controlnet", CV, "Adding Conditional Control to Text-to-Image Diffusion Models", 2023,
    "2302.05543", TB,
    """ControlNet adds spatial conditioning to a locked, pretrained Stable Diffusion U-Net. The
    locked network passes the noisy latent z_t through encoder blocks A-D, a middle block and
    decoder blocks D-A, with skip connections from each encoder block to the matching decoder
    block; prompt and time embeddings condition the blocks. A trainable copy of the encoder blocks
    and middle block receives z_t plus the condition c_f, which enters through a zero
    convolution. The output of every trainable block passes through its own zero convolution and
    is added to the corresponding skip connection or to the middle block of the locked network.
    Because zero convolutions start at zero, training begins exactly from the original model.""",
    ["Input z_t", "Prompt c_t", "Text Encoder", "Time t", "Time Encoder", "Condition c_f",
     "SD Encoder Block A 64×64", "SD Encoder Block B 32×32", "SD Encoder Block C 16×16",
     "SD Encoder Block D 8×8", "SD Middle Block 8×8", "SD Decoder Block D 8×8",
     "SD Decoder Block C 16×16", "SD Decoder Block B 32×32", "SD Decoder Block A 64×64",
     "Output ε_θ(z_t, t, c_t, c_f)", "zero convolution (input)", "Trainable Encoder Block A",
     "Trainable Encoder Block B", "Trainable Encoder Block C", "Trainable Encoder Block D",
     "Trainable Middle Block", "zero convolution A", "zero convolution B", "zero convolution C",
     "zero convolution D", "zero convolution M"],
    ["Prompt c_t -> Text Encoder",
     "Time t -> Time Encoder",
     "Input z_t -> SD Encoder Block A 64×64 -> SD Encoder Block B 32×32 -> "
     "SD Encoder Block C 16×16 -> SD Encoder Block D 8×8 -> SD Middle Block 8×8 -> "
     "SD Decoder Block D 8×8 -> SD Decoder Block C 16×16 -> SD Decoder Block B 32×32 -> "
     "SD Decoder Block A 64×64 -> Output ε_θ(z_t, t, c_t, c_f)",
     "SD Encoder Block A 64×64 -> SD Decoder Block A 64×64",
     "SD Encoder Block B 32×32 -> SD Decoder Block B 32×32",
     "SD Encoder Block C 16×16 -> SD Decoder Block C 16×16",
     "SD Encoder Block D 8×8 -> SD Decoder Block D 8×8",
     "Text Encoder -> SD Encoder Block A 64×64",
     "Time Encoder -> SD Encoder Block A 64×64",
     "Text Encoder -> Trainable Encoder Block A",
     "Time Encoder -> Trainable Encoder Block A",
     "Condition c_f -> zero convolution (input) -> Trainable Encoder Block A",
     "Input z_t -> Trainable Encoder Block A",
     "Trainable Encoder Block A -> Trainable Encoder Block B -> Trainable Encoder Block C -> "
     "Trainable Encoder Block D -> Trainable Middle Block",
     "Trainable Encoder Block A -> zero convolution A -> SD Decoder Block A 64×64",
     "Trainable Encoder Block B -> zero convolution B -> SD Decoder Block B 32×32",
     "Trainable Encoder Block C -> zero convolution C -> SD Decoder Block C 16×16",
     "Trainable Encoder Block D -> zero convolution D -> SD Decoder Block D 8×8",
     "Trainable Middle Block -> zero convolution M -> SD Middle Block 8×8"],
    [G("Stable Diffusion (locked)",
       ("SD Encoder Block A 64×64", "SD Encoder Block B 32×32", "SD Encoder Block C 16×16",
        "SD Encoder Block D 8×8", "SD Middle Block 8×8", "SD Decoder Block D 8×8",
        "SD Decoder Block C 16×16", "SD Decoder Block B 32×32", "SD Decoder Block A 64×64")),
     G("ControlNet (trainable copy)",
       ("zero convolution (input)", "Trainable Encoder Block A", "Trainable Encoder Block B",
        "Trainable Encoder Block C", "Trainable Encoder Block D", "Trainable Middle Block",
        "zero convolution A", "zero convolution B", "zero convolution C", "zero convolution D",
        "zero convolution M"))],
)


# ================================================== natural language processing
item(
    "nlp_transformer", NLP, "Attention Is All You Need", 2017, "1706.03762", TB,
    """The Transformer is an encoder-decoder model built only from attention and feed-forward
    layers. Input tokens are embedded, summed with a positional encoding, and processed by N
    encoder layers of multi-head self-attention and a feed-forward network, each wrapped in a
    residual connection and Add & Norm. The decoder embeds the outputs shifted right, applies
    masked multi-head self-attention, then multi-head attention over the encoder output, then a
    feed-forward network, again with residual Add & Norm around every sub-layer. A final linear
    layer and softmax give the output probabilities.""",
    ["Inputs", "Input Embedding", "Encoder Positional Encoding", "Encoder ⊕",
     "Encoder Multi-Head Attention", "Encoder Add & Norm 1", "Encoder Feed Forward",
     "Encoder Add & Norm 2", "Outputs (shifted right)", "Output Embedding",
     "Decoder Positional Encoding", "Decoder ⊕", "Masked Multi-Head Attention",
     "Decoder Add & Norm 1", "Decoder Multi-Head Attention", "Decoder Add & Norm 2",
     "Decoder Feed Forward", "Decoder Add & Norm 3", "Linear", "Softmax",
     "Output Probabilities"],
    ["Inputs -> Input Embedding -> Encoder ⊕ -> Encoder Multi-Head Attention -> "
     "Encoder Add & Norm 1 -> Encoder Feed Forward -> Encoder Add & Norm 2",
     "Encoder Positional Encoding -> Encoder ⊕",
     "Encoder ⊕ -> Encoder Add & Norm 1 | residual",
     "Encoder Add & Norm 1 -> Encoder Add & Norm 2 | residual",
     "Outputs (shifted right) -> Output Embedding -> Decoder ⊕ -> Masked Multi-Head Attention -> "
     "Decoder Add & Norm 1 -> Decoder Multi-Head Attention -> Decoder Add & Norm 2 -> "
     "Decoder Feed Forward -> Decoder Add & Norm 3 -> Linear -> Softmax -> Output Probabilities",
     "Decoder Positional Encoding -> Decoder ⊕",
     "Decoder ⊕ -> Decoder Add & Norm 1 | residual",
     "Decoder Add & Norm 1 -> Decoder Add & Norm 2 | residual",
     "Decoder Add & Norm 2 -> Decoder Add & Norm 3 | residual",
     "Encoder Add & Norm 2 -> Decoder Multi-Head Attention | K, V"],
    [G("Encoder (N×)", ("Encoder Multi-Head Attention", "Encoder Add & Norm 1",
                        "Encoder Feed Forward", "Encoder Add & Norm 2")),
     G("Decoder (N×)", ("Masked Multi-Head Attention", "Decoder Add & Norm 1",
                        "Decoder Multi-Head Attention", "Decoder Add & Norm 2",
                        "Decoder Feed Forward", "Decoder Add & Norm 3"))],
)
item(
    "nlp_bert", NLP,
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", 2018,
    "1810.04805", TB,
    """BERT pre-trains a bidirectional Transformer encoder on unlabeled text with two objectives.
    An unlabeled sentence pair is masked into masked sentence A and masked sentence B and packed
    into one input sequence with [CLS] and [SEP] tokens. The input representation is the sum of
    token embeddings, segment embeddings and position embeddings. The BERT encoder produces a
    [CLS] output C, used for next sentence prediction (NSP), and token outputs T_i, used for the
    masked language model (Mask LM).""",
    ["Unlabeled Sentence Pair", "Masked Sentence A", "Masked Sentence B",
     "[CLS] A [SEP] B [SEP]", "Token Embeddings", "Segment Embeddings",
     "Position Embeddings", "Input Representation (sum)", "BERT Encoder", "C", "T_1 … T_N",
     "NSP", "Mask LM"],
    ["Unlabeled Sentence Pair -> Masked Sentence A -> [CLS] A [SEP] B [SEP]",
     "Unlabeled Sentence Pair -> Masked Sentence B -> [CLS] A [SEP] B [SEP]",
     "[CLS] A [SEP] B [SEP] -> Token Embeddings -> Input Representation (sum)",
     "[CLS] A [SEP] B [SEP] -> Segment Embeddings -> Input Representation (sum)",
     "[CLS] A [SEP] B [SEP] -> Position Embeddings -> Input Representation (sum)",
     "Input Representation (sum) -> BERT Encoder -> C -> NSP",
     "BERT Encoder -> T_1 … T_N -> Mask LM"],
    [G("Input Embeddings", ("Token Embeddings", "Segment Embeddings", "Position Embeddings",
                            "Input Representation (sum)")),
     G("Pre-training Heads", ("NSP", "Mask LM"))],
)
item(
    "nlp_rag", NLP, "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks", 2020,
    "2005.11401", LR,
    """RAG combines a neural retriever with a sequence-to-sequence generator. A query encoder
    embeds the query x as q(x), and maximum inner product search (MIPS) over a dense document
    index d(z) returns the top-k documents. The generator p_θ, a BART model, conditions on the
    query together with each retrieved document. Its predictions are marginalized over the
    retrieved documents to produce the output y, and retriever and generator are trained end to
    end.""",
    ["Query x", "Query Encoder", "q(x)", "Document Index d(z)", "MIPS",
     "Retrieved Documents z_1…z_k", "Generator p_θ", "Marginalize", "Output y"],
    ["Query x -> Query Encoder -> q(x) -> MIPS -> Retrieved Documents z_1…z_k -> Generator p_θ",
     "Document Index d(z) -> MIPS",
     "Query x -> Generator p_θ",
     "Generator p_θ -> Marginalize -> Output y"],
    [G("Retriever p_η (Non-Parametric)", ("Query Encoder", "q(x)", "Document Index d(z)",
                                          "MIPS")),
     G("Generator p_θ (Parametric)", ("Generator p_θ", "Marginalize"))],
)
item(
    "nlp_lora", NLP, "LoRA: Low-Rank Adaptation of Large Language Models", 2021, "2106.09685", TB,
    """LoRA fine-tunes a large model by learning a low-rank update next to each frozen weight
    matrix. The input x goes through the frozen pretrained weights W. In parallel, x is projected
    down to rank r by matrix A, initialized from a Gaussian, and back up by matrix B, initialized
    to zero. The two paths are summed to give the output h, and only A and B are trained.""",
    ["x", "Pretrained Weights W", "A = N(0, σ²)", "B = 0", "h"],
    ["x -> Pretrained Weights W -> h",
     "x -> A = N(0, σ²) -> B = 0 | r",
     "B = 0 -> h"],
)
item(
    "nlp_instructgpt", NLP, "Training language models to follow instructions with human feedback",
    2022, "2203.02155", LR,
    """InstructGPT aligns a language model with human intent in three steps. Step 1 samples a
    prompt from the prompt dataset, a labeler demonstrates the desired output, and the data is
    used for supervised fine-tuning (SFT). Step 2 samples several model outputs for a prompt, a
    labeler ranks them, and the rankings train a reward model (RM). Step 3 initializes a policy
    from the SFT model, the policy writes an output for a new prompt, the reward model scores it,
    and the reward updates the policy with PPO.""",
    ["Prompt Dataset", "Labeler Demonstration", "Supervised Fine-Tuning (SFT)",
     "Sampled Prompt", "Model Outputs A–D", "Labeler Ranking", "Reward Model (RM)",
     "New Prompt", "PPO Policy", "Policy Output", "Reward r_k", "PPO Update"],
    ["Prompt Dataset -> Labeler Demonstration -> Supervised Fine-Tuning (SFT)",
     "Prompt Dataset -> Sampled Prompt -> Model Outputs A–D -> Labeler Ranking -> "
     "Reward Model (RM)",
     "Supervised Fine-Tuning (SFT) -> Model Outputs A–D",
     "Supervised Fine-Tuning (SFT) -> PPO Policy | initialize | dashed",
     "Prompt Dataset -> New Prompt -> PPO Policy -> Policy Output -> Reward Model (RM) -> "
     "Reward r_k -> PPO Update -> PPO Policy"],
    [G("Step 1: Supervised fine-tuning", ("Labeler Demonstration",
                                          "Supervised Fine-Tuning (SFT)")),
     G("Step 2: Reward model training", ("Sampled Prompt", "Model Outputs A–D",
                                         "Labeler Ranking", "Reward Model (RM)")),
     G("Step 3: Optimize policy with PPO", ("New Prompt", "PPO Policy", "Policy Output",
                                            "Reward r_k", "PPO Update"))],
)
item(
    "nlp_bahdanau_attention", NLP,
    "Neural Machine Translation by Jointly Learning to Align and Translate", 2014, "1409.0473",
    TB,
    """This model adds soft attention to an RNN encoder-decoder for machine translation. A
    bidirectional RNN (forward and backward RNNs) reads the source words and concatenates their
    states into annotations h_j. At each target step an alignment model scores every annotation
    against the previous decoder state, and a softmax turns the scores into attention weights.
    The weighted sum of annotations is the context vector c_t, which the decoder uses together
    with the previous target word to update its state s_t and emit the next target word y_t.""",
    ["Source Words x_1…x_T", "Forward RNN", "Backward RNN", "Annotations h_j",
     "Alignment Model a", "Attention Weights α_tj", "Context Vector c_t", "Decoder State s_t",
     "Target Word y_t"],
    ["Source Words x_1…x_T -> Forward RNN -> Annotations h_j",
     "Source Words x_1…x_T -> Backward RNN -> Annotations h_j",
     "Annotations h_j -> Alignment Model a -> Attention Weights α_tj -> Context Vector c_t",
     "Annotations h_j -> Context Vector c_t",
     "Decoder State s_t -> Alignment Model a | s_{t−1}",
     "Context Vector c_t -> Decoder State s_t -> Target Word y_t",
     "Target Word y_t -> Decoder State s_t | y_{t−1} | dashed"],
    [G("Encoder", ("Forward RNN", "Backward RNN", "Annotations h_j")),
     G("Decoder", ("Decoder State s_t", "Target Word y_t"))],
)
item(
    "nlp_word2vec_skipgram", NLP, "Efficient Estimation of Word Representations in Vector Space",
    2013, "1301.3781", LR,
    """The continuous skip-gram model learns word vectors by predicting the context of a word.
    The current word w(t) is mapped by a projection layer to its vector. From that projection the
    model predicts the surrounding words w(t−2), w(t−1), w(t+1) and w(t+2) within the window.
    The projection weights become the word embeddings.""",
    ["w(t)", "PROJECTION", "w(t−2)", "w(t−1)", "w(t+1)", "w(t+2)"],
    ["w(t) -> PROJECTION -> w(t−2)",
     "PROJECTION -> w(t−1)",
     "PROJECTION -> w(t+1)",
     "PROJECTION -> w(t+2)"],
    [G("INPUT", ("w(t)",)),
     G("OUTPUT", ("w(t−2)", "w(t−1)", "w(t+1)", "w(t+2)"))],
)
item(
    "nlp_gpt", NLP, "Improving Language Understanding by Generative Pre-Training", 2018, "", TB,
    """GPT pre-trains a decoder-only Transformer as a language model and then fine-tunes it on
    downstream tasks. Token and position embeddings feed a stack of 12 Transformer blocks. Each
    block applies masked multi self-attention and a feed-forward network, each followed by a
    residual connection and layer norm. The final representation feeds both the text prediction
    head used for language modeling and a task classifier used for fine-tuning.""",
    ["Text & Position Embed", "Masked Multi Self Attention", "Layer Norm 1", "Feed Forward",
     "Layer Norm 2", "Text Prediction", "Task Classifier"],
    ["Text & Position Embed -> Masked Multi Self Attention -> Layer Norm 1 -> Feed Forward -> "
     "Layer Norm 2 -> Text Prediction",
     "Text & Position Embed -> Layer Norm 1 | +",
     "Layer Norm 1 -> Layer Norm 2 | +",
     "Layer Norm 2 -> Task Classifier"],
    [G("Transformer Block (12×)", ("Masked Multi Self Attention", "Layer Norm 1",
                                   "Feed Forward", "Layer Norm 2"))],
    reference="A. Radford, K. Narasimhan, T. Salimans, I. Sutskever. Improving Language "
    "Understanding by Generative Pre-Training. OpenAI technical report, 2018.",
)
item(
    "nlp_corenlp", NLP, "The Stanford CoreNLP Natural Language Processing Toolkit", 2014, "", LR,
    """Stanford CoreNLP runs a fixed sequence of annotators over raw text in an analysis
    pipeline. Tokenization splits the text into tokens, sentence splitting groups them into
    sentences, part-of-speech tagging and morphological analysis (lemmatization) label each
    token, and named entity recognition marks people, places and organizations. Syntactic
    parsing builds a parse for every sentence, and coreference resolution links mentions of the
    same entity. Each annotator adds its results to a shared annotation object, which is output as
    the annotated text.""",
    ["Raw Text", "Tokenization", "Sentence Splitting", "Part-of-speech Tagging",
     "Morphological Analysis", "Named Entity Recognition", "Syntactic Parsing",
     "Coreference Resolution", "Annotated Text"],
    ["Raw Text -> Tokenization -> Sentence Splitting -> Part-of-speech Tagging -> "
     "Morphological Analysis -> Named Entity Recognition -> Syntactic Parsing -> "
     "Coreference Resolution -> Annotated Text"],
    [G("Annotation Pipeline", ("Tokenization", "Sentence Splitting", "Part-of-speech Tagging",
                               "Morphological Analysis", "Named Entity Recognition",
                               "Syntactic Parsing", "Coreference Resolution"))],
    reference="C. D. Manning, M. Surdeanu, J. Bauer, J. Finkel, S. J. Bethard and D. McClosky. "
    "The Stanford CoreNLP Natural Language Processing Toolkit. Proceedings of ACL 2014: System "
    "Demonstrations, pp. 55-60.",
)
item(
    "nlp_react", NLP, "ReAct: Synergizing Reasoning and Acting in Language Models", 2022,
    "2210.03629", LR,
    """ReAct interleaves reasoning and acting in one language model loop. Given a task question,
    the language model produces a free-form thought that is appended to its own context. It then
    emits an action, such as a search call, which is executed in the environment. The resulting
    observation is fed back to the language model, and the loop repeats until it outputs a final
    answer.""",
    ["Task Question", "Language Model", "Thought", "Action", "Environment", "Observation",
     "Final Answer"],
    ["Task Question -> Language Model -> Thought | reasoning trace",
     "Thought -> Language Model",
     "Language Model -> Action -> Environment -> Observation -> Language Model",
     "Language Model -> Final Answer"],
)
item(
    "nlp_self_instruct", NLP,
    "Self-Instruct: Aligning Language Models with Self-Generated Instructions", 2022,
    "2212.10560", LR,
    """Self-Instruct bootstraps instruction-tuning data from a language model itself. A task pool
    starts with 175 seed tasks. Step 1 prompts the model with pool tasks to generate new
    instructions, and Step 2 identifies whether each instruction is a classification task. Step 3
    generates instances, output-first for classification tasks and input-first otherwise. Step 4
    filters low-quality and near-duplicate tasks, and the survivors are added back to the task
    pool.""",
    ["175 Seed Tasks", "Task Pool", "Step 1: Instruction Generation",
     "Step 2: Classification Task Identification", "Output-first", "Input-first",
     "Step 3: Instance Generation", "Step 4: Filtering"],
    ["175 Seed Tasks -> Task Pool -> Step 1: Instruction Generation -> "
     "Step 2: Classification Task Identification",
     "Step 2: Classification Task Identification -> Output-first | Yes",
     "Step 2: Classification Task Identification -> Input-first | No",
     "Output-first -> Step 3: Instance Generation",
     "Input-first -> Step 3: Instance Generation",
     "Step 3: Instance Generation -> Step 4: Filtering -> Task Pool | add to pool"],
)
item(
    "nlp_switch_transformer", NLP,
    "Switch Transformers: Scaling to Trillion Parameter Models with Simple and Efficient Sparsity",
    2021, "2101.03961", TB,
    """The Switch Transformer replaces the dense feed-forward layer of a Transformer block with a
    sparse switching FFN layer. A token embedding with its positional embedding passes through
    self-attention and an add + normalize step. A router then sends each token to exactly one of
    several expert FFNs, here FFN 1 to FFN 4, chosen by the highest router probability p. The
    selected expert's output is scaled by the gate value p and combined with the residual in a
    second add + normalize step to give the output y.""",
    ["Token Embedding x", "Positional Embedding", "Self-Attention", "Add + Normalize 1",
     "Router", "FFN 1", "FFN 2", "FFN 3", "FFN 4", "Gate p × Expert Output",
     "Add + Normalize 2", "Output y"],
    ["Token Embedding x -> Self-Attention -> Add + Normalize 1 -> Router",
     "Positional Embedding -> Self-Attention",
     "Token Embedding x -> Add + Normalize 1 | residual",
     "Router -> FFN 1 | p = 0.65",
     "Router -> FFN 2 || dashed",
     "Router -> FFN 3 || dashed",
     "Router -> FFN 4 || dashed",
     "FFN 1 -> Gate p × Expert Output",
     "FFN 2 -> Gate p × Expert Output || dashed",
     "FFN 3 -> Gate p × Expert Output || dashed",
     "FFN 4 -> Gate p × Expert Output || dashed",
     "Router -> Gate p × Expert Output | p",
     "Gate p × Expert Output -> Add + Normalize 2 -> Output y",
     "Add + Normalize 1 -> Add + Normalize 2 | residual"],
    [G("Switching FFN Layer", ("Router", "FFN 1", "FFN 2", "FFN 3", "FFN 4",
                               "Gate p × Expert Output"))],
)


# =============================================================== machine learning
item(
    "ml_gan", ML, "Generative Adversarial Nets", 2014, "1406.2661", LR,
    """A generative adversarial network trains two models against each other. The generator G
    maps latent noise z to generated samples G(z). The discriminator D receives both generated
    samples and real data x and outputs the probability that its input is real. The adversarial
    loss on that probability updates D to tell real from fake and updates G to fool D.""",
    ["Latent Noise z", "Generator G", "Generated Samples G(z)", "Real Data x",
     "Discriminator D", "Real / Fake Probability", "Adversarial Loss"],
    ["Latent Noise z -> Generator G -> Generated Samples G(z) -> Discriminator D",
     "Real Data x -> Discriminator D",
     "Discriminator D -> Real / Fake Probability -> Adversarial Loss",
     "Adversarial Loss -> Discriminator D | update D | dashed",
     "Adversarial Loss -> Generator G | update G | dashed"],
)
item(
    "ml_vae", ML, "Auto-Encoding Variational Bayes", 2013, "1312.6114", LR,
    """The variational autoencoder learns a latent-variable model with an amortized inference
    network. The encoder q_φ(z|x) maps an input x to the mean μ and standard deviation σ of a
    Gaussian posterior. The reparameterization trick draws noise ε from N(0, I) and forms the
    latent z = μ + σ ⊙ ε, so gradients flow through the sampling. The decoder p_θ(x|z)
    reconstructs x̂ from z. The training objective, the ELBO, combines the reconstruction loss
    with the KL divergence between the posterior and the prior.""",
    ["Input x", "Encoder q_φ(z|x)", "Mean μ", "Std. Dev. σ", "Noise ε ~ N(0, I)",
     "Latent z = μ+σ⊙ε", "Decoder p_θ(x|z)", "Reconstruction x̂", "Reconstruction Loss",
     "KL Divergence", "ELBO"],
    ["Input x -> Encoder q_φ(z|x) -> Mean μ -> Latent z = μ+σ⊙ε",
     "Encoder q_φ(z|x) -> Std. Dev. σ -> Latent z = μ+σ⊙ε",
     "Noise ε ~ N(0, I) -> Latent z = μ+σ⊙ε",
     "Latent z = μ+σ⊙ε -> Decoder p_θ(x|z) -> Reconstruction x̂ -> Reconstruction Loss",
     "Input x -> Reconstruction Loss",
     "Mean μ -> KL Divergence",
     "Std. Dev. σ -> KL Divergence",
     "Reconstruction Loss -> ELBO",
     "KL Divergence -> ELBO"],
)
item(
    "ml_ddpm", ML, "Denoising Diffusion Probabilistic Models", 2020, "2006.11239", LR,
    """DDPM training teaches a network to predict the noise added by a fixed diffusion process. A
    data sample x₀, a uniformly drawn timestep t and Gaussian noise ε are combined by the forward
    noising step into the noisy sample x_t. The denoising U-Net ε_θ takes x_t and t and predicts
    the noise. The mean squared error between the predicted noise and ε is minimized by a gradient
    step on the U-Net parameters, and the loop repeats until convergence.""",
    ["Data x₀ ~ q(x₀)", "t ~ Uniform({1,…,T})", "ε ~ N(0, I)", "Forward Noising",
     "Noisy Sample x_t", "Denoising U-Net ε_θ", "Predicted Noise", "Loss ‖ε − ε_θ‖²",
     "Gradient Step"],
    ["Data x₀ ~ q(x₀) -> Forward Noising",
     "t ~ Uniform({1,…,T}) -> Forward Noising",
     "ε ~ N(0, I) -> Forward Noising",
     "Forward Noising -> Noisy Sample x_t -> Denoising U-Net ε_θ -> Predicted Noise -> "
     "Loss ‖ε − ε_θ‖² -> Gradient Step",
     "t ~ Uniform({1,…,T}) -> Denoising U-Net ε_θ",
     "ε ~ N(0, I) -> Loss ‖ε − ε_θ‖²",
     "Gradient Step -> Denoising U-Net ε_θ | update θ | dashed"],
)
item(
    "ml_maml", ML, "Model-Agnostic Meta-Learning for Fast Adaptation of Deep Networks", 2017,
    "1703.03400", LR,
    """MAML learns an initialization that adapts to a new task in a few gradient steps. A batch
    of tasks is sampled from the task distribution, and each task is split into a support set and
    a query set. In the inner loop, the meta-parameters θ take a gradient step on the support set
    to give adapted parameters θ'_i. The query loss of the adapted parameters is summed over
    tasks, and the meta-gradient update in the outer loop changes θ through the inner step.""",
    ["Task Distribution p(T)", "Task Batch T_i", "Support Set", "Query Set",
     "Meta-Parameters θ", "Inner-Loop Gradient Step", "Adapted Parameters θ'_i",
     "Query Loss", "Meta-Gradient Update"],
    ["Task Distribution p(T) -> Task Batch T_i -> Support Set -> Inner-Loop Gradient Step",
     "Task Batch T_i -> Query Set -> Query Loss",
     "Meta-Parameters θ -> Inner-Loop Gradient Step -> Adapted Parameters θ'_i -> Query Loss",
     "Query Loss -> Meta-Gradient Update -> Meta-Parameters θ"],
    [G("Inner Loop (per task)", ("Support Set", "Query Set", "Inner-Loop Gradient Step",
                                 "Adapted Parameters θ'_i", "Query Loss")),
     G("Outer Loop", ("Meta-Parameters θ", "Meta-Gradient Update"))],
)
item(
    "ml_fedavg", ML, "Communication-Efficient Learning of Deep Networks from Decentralized Data",
    2016, "1602.05629", TB,
    """Federated averaging trains a shared model without collecting client data. In each round
    the server samples a subset of clients and broadcasts the current global model w_t. Every
    selected client runs several epochs of local SGD on its own local data and returns its local
    model. The server combines the local models by a weighted average, with weights proportional
    to the clients' data sizes, to obtain the next global model.""",
    ["Global Model w_t", "Client Sampling", "Weighted Averaging", "Local Data 1",
     "Local SGD 1", "Local Model 1", "Local Data 2", "Local SGD 2", "Local Model 2",
     "Local Data K", "Local SGD K", "Local Model K"],
    ["Global Model w_t -> Client Sampling",
     "Client Sampling -> Local SGD 1 | w_t",
     "Client Sampling -> Local SGD 2 | w_t",
     "Client Sampling -> Local SGD K | w_t",
     "Local Data 1 -> Local SGD 1 -> Local Model 1 -> Weighted Averaging",
     "Local Data 2 -> Local SGD 2 -> Local Model 2 -> Weighted Averaging",
     "Local Data K -> Local SGD K -> Local Model K -> Weighted Averaging",
     "Weighted Averaging -> Global Model w_t | w_{t+1}"],
    [G("Server", ("Global Model w_t", "Client Sampling", "Weighted Averaging")),
     G("Client 1", ("Local Data 1", "Local SGD 1", "Local Model 1")),
     G("Client 2", ("Local Data 2", "Local SGD 2", "Local Model 2")),
     G("Client K", ("Local Data K", "Local SGD K", "Local Model K"))],
)
item(
    "ml_ppo", ML, "Proximal Policy Optimization Algorithms", 2017, "1707.06347", LR,
    """PPO is an actor-critic policy-gradient method with a clipped surrogate objective. The
    policy π_θ acts in the environment, and the resulting states and rewards are stored in a
    rollout buffer. The value function V_φ and the rollouts give generalized advantage estimates
    (GAE). The probability ratio between the current policy and the old policy π_θold enters a
    clipped surrogate objective, and the value function is fitted with a value loss on the
    returns. Several epochs of minibatch SGD with Adam update both networks, after which the old
    policy is replaced by the new one.""",
    ["Environment", "Policy π_θ (Actor)", "Action a_t", "State s_t, Reward r_t",
     "Rollout Buffer", "Value Function V_φ (Critic)", "GAE Advantages Â_t",
     "Old Policy π_θold", "Probability Ratio r_t(θ)", "Clipped Surrogate Objective",
     "Value Loss", "Minibatch SGD (Adam)"],
    ["Policy π_θ (Actor) -> Action a_t -> Environment -> State s_t, Reward r_t -> "
     "Policy π_θ (Actor)",
     "State s_t, Reward r_t -> Rollout Buffer -> Value Function V_φ (Critic) -> "
     "GAE Advantages Â_t",
     "Rollout Buffer -> GAE Advantages Â_t",
     "Policy π_θ (Actor) -> Probability Ratio r_t(θ)",
     "Old Policy π_θold -> Probability Ratio r_t(θ) -> Clipped Surrogate Objective",
     "GAE Advantages Â_t -> Clipped Surrogate Objective",
     "GAE Advantages Â_t -> Value Loss | returns",
     "Value Function V_φ (Critic) -> Value Loss",
     "Clipped Surrogate Objective -> Minibatch SGD (Adam)",
     "Value Loss -> Minibatch SGD (Adam)",
     "Minibatch SGD (Adam) -> Policy π_θ (Actor) | update θ | dashed",
     "Minibatch SGD (Adam) -> Value Function V_φ (Critic) | update φ | dashed",
     "Policy π_θ (Actor) -> Old Policy π_θold | copy θ | dashed"],
)
item(
    "ml_dqn", ML, "Human-level control through deep reinforcement learning", 2015, "", LR,
    """Deep Q-Networks learn action values from pixels with two stabilizing tricks. An ε-greedy
    policy on the Q-network picks an action, and each transition (s, a, r, s') from the
    environment is stored in a replay memory. Minibatches sampled uniformly from replay memory
    feed both the online Q-network and a separate target network. The target network gives the TD
    target y = r + γ max Q̂, and gradient descent on the squared TD error updates the Q-network.
    Every C steps the Q-network weights are copied into the target network.""",
    ["Environment", "ε-greedy Policy", "Action a_t", "Transition (s, a, r, s')",
     "Replay Memory D", "Sampled Minibatch", "Q-Network Q(s, a; θ)",
     "Target Network Q̂(θ⁻)", "TD Target y", "Loss (y − Q)²", "Gradient Descent"],
    ["Q-Network Q(s, a; θ) -> ε-greedy Policy -> Action a_t -> Environment -> "
     "Transition (s, a, r, s') -> Replay Memory D -> Sampled Minibatch",
     "Sampled Minibatch -> Q-Network Q(s, a; θ)",
     "Sampled Minibatch -> Target Network Q̂(θ⁻) -> TD Target y",
     "Sampled Minibatch -> TD Target y | r",
     "TD Target y -> Loss (y − Q)²",
     "Q-Network Q(s, a; θ) -> Loss (y − Q)² -> Gradient Descent",
     "Gradient Descent -> Q-Network Q(s, a; θ) | update θ | dashed",
     "Q-Network Q(s, a; θ) -> Target Network Q̂(θ⁻) | every C steps | dashed"],
    doi="10.1038/nature14236",
    reference="V. Mnih et al. Human-level control through deep reinforcement learning. "
    "Nature 518, 529-533 (2015).",
)
item(
    "ml_batchnorm", ML,
    "Batch Normalization: Accelerating Deep Network Training by Reducing Internal Covariate Shift",
    2015, "1502.03167", TB,
    """Batch normalization normalizes each activation over the mini-batch during training. From
    the mini-batch values x_1…m it computes the mini-batch mean μ_B and, using that mean, the
    mini-batch variance σ²_B. Each value is normalized with the mean and variance to x̂_i. A scale
    and shift step with the learned parameters γ and β produces the output y_i.""",
    ["Mini-batch x_1…m", "Mini-batch Mean μ_B", "Mini-batch Variance σ²_B", "Normalize x̂_i",
     "Scale γ", "Shift β", "Scale and Shift", "Output y_i"],
    ["Mini-batch x_1…m -> Mini-batch Mean μ_B -> Mini-batch Variance σ²_B -> Normalize x̂_i",
     "Mini-batch x_1…m -> Mini-batch Variance σ²_B",
     "Mini-batch x_1…m -> Normalize x̂_i",
     "Mini-batch Mean μ_B -> Normalize x̂_i",
     "Normalize x̂_i -> Scale and Shift -> Output y_i",
     "Scale γ -> Scale and Shift",
     "Shift β -> Scale and Shift"],
)
item(
    "ml_deep_compression", ML,
    "Deep Compression: Compressing Deep Neural Networks with Pruning, Trained Quantization and "
    "Huffman Coding", 2015, "1510.00149", LR,
    """Deep Compression shrinks a trained network in a three-stage pipeline. Pruning trains the
    connectivity, prunes connections with small weights and retrains the remaining weights.
    Trained quantization clusters the weights, generates a code book of shared centroids,
    quantizes every weight to its code-book entry and retrains the code book. Huffman encoding
    then encodes the weights and the sparse indices, producing the compressed network.""",
    ["Original Network", "Train Connectivity", "Prune Connections", "Train Weights",
     "Cluster the Weights", "Generate Code Book", "Quantize Weights with Code Book",
     "Retrain Code Book", "Encode Weights", "Encode Index", "Compressed Network"],
    ["Original Network -> Train Connectivity -> Prune Connections -> Train Weights -> "
     "Cluster the Weights -> Generate Code Book -> Quantize Weights with Code Book -> "
     "Retrain Code Book -> Encode Weights -> Encode Index -> Compressed Network"],
    [G("Pruning", ("Train Connectivity", "Prune Connections", "Train Weights")),
     G("Quantization", ("Cluster the Weights", "Generate Code Book",
                        "Quantize Weights with Code Book", "Retrain Code Book")),
     G("Huffman Encoding", ("Encode Weights", "Encode Index"))],
)
item(
    "ml_simclr", ML, "A Simple Framework for Contrastive Learning of Visual Representations",
    2020, "2002.05709", LR,
    """SimCLR learns visual representations by contrasting augmented views. Two random
    augmentations t and t′ drawn from the same family turn an image x into two views x̃_i and
    x̃_j. A shared base encoder f(·) maps each view to a representation h, and a small projection
    head g(·) maps h to z. A contrastive loss maximizes agreement between z_i and z_j relative to
    the other views in the batch.""",
    ["x", "x̃_i", "x̃_j", "h_i", "h_j", "z_i", "z_j", "Maximize agreement"],
    ["x -> x̃_i | t ~ 𝒯",
     "x -> x̃_j | t′ ~ 𝒯",
     "x̃_i -> h_i | f(·)",
     "x̃_j -> h_j | f(·)",
     "h_i -> z_i | g(·)",
     "h_j -> z_j | g(·)",
     "z_i -> Maximize agreement",
     "z_j -> Maximize agreement"],
)
item(
    "ml_nas_rl", ML, "Neural Architecture Search with Reinforcement Learning", 2016,
    "1611.01578", LR,
    """Neural architecture search uses a recurrent controller to design networks. The controller
    RNN samples an architecture A with probability p. A child network with that architecture is
    trained and evaluated to get its validation accuracy R. The gradient of p is scaled by R and
    used to update the controller with REINFORCE, so better architectures become more likely.""",
    ["Controller (RNN)", "Architecture A", "Child Network", "Accuracy R"],
    ["Controller (RNN) -> Architecture A | sample with probability p",
     "Architecture A -> Child Network | train",
     "Child Network -> Accuracy R | evaluate",
     "Accuracy R -> Controller (RNN) | scale gradient of p by R"],
)
item(
    "ml_ntm_addressing", ML, "Neural Turing Machines", 2014, "1410.5401", LR,
    """The Neural Turing Machine addresses its memory with a differentiable four-stage pipeline.
    Content addressing compares the key k_t with every row of memory M_t, sharpened by the key
    strength β_t, to give w^c_t. Interpolation mixes w^c_t with the previous weighting w_{t−1}
    using the gate g_t. A convolutional shift with the shift weighting s_t rotates the result, and
    sharpening with γ_t produces the final weighting w_t. The parameters k_t, β_t, g_t, s_t and
    γ_t are emitted by the controller.""",
    ["k_t", "β_t", "g_t", "s_t", "γ_t", "M_t", "w_{t−1}", "Content Addressing", "w^c_t",
     "Interpolation", "w^g_t", "Convolutional Shift", "w̃_t", "Sharpening", "w_t"],
    ["k_t -> Content Addressing",
     "β_t -> Content Addressing",
     "M_t -> Content Addressing",
     "Content Addressing -> w^c_t -> Interpolation -> w^g_t -> Convolutional Shift -> w̃_t -> "
     "Sharpening -> w_t",
     "g_t -> Interpolation",
     "w_{t−1} -> Interpolation",
     "s_t -> Convolutional Shift",
     "γ_t -> Sharpening"],
    [G("Controller Outputs", ("k_t", "β_t", "g_t", "s_t", "γ_t"))],
)


# ============================================================ integrated circuits
item(
    "ic_sar_adc", IC,
    "All-MOS charge redistribution analog-to-digital conversion techniques. I", 1975, "", LR,
    """A successive-approximation (SAR) ADC resolves one bit per clock cycle with a binary
    search. The analog input is captured by a sample-and-hold, which in charge-redistribution
    designs is the capacitive DAC itself. A comparator compares the held input with the output of
    the capacitive DAC, which is driven from the reference voltage. The SAR logic sets or clears
    the current bit from the comparator decision, updates the DAC code, and moves on to the next
    bit. After N cycles the SAR register holds the digital output code.""",
    ["Analog Input V_in", "Sample-and-Hold", "Comparator", "SAR Logic", "Capacitive DAC",
     "Reference V_ref", "Clock", "Digital Output D_out"],
    ["Analog Input V_in -> Sample-and-Hold -> Comparator -> SAR Logic -> Capacitive DAC -> "
     "Comparator",
     "Reference V_ref -> Capacitive DAC",
     "Clock -> Sample-and-Hold",
     "Clock -> SAR Logic",
     "SAR Logic -> Digital Output D_out"],
    reference="J. L. McCreary and P. R. Gray. All-MOS charge redistribution analog-to-digital "
    "conversion techniques. I. IEEE Journal of Solid-State Circuits 10(6):371-379, 1975.",
)
item(
    "ic_pipelined_adc", IC, "A pipelined 5-Msample/s 9-bit analog-to-digital converter", 1987,
    "", LR,
    """A pipelined ADC splits the conversion over a chain of low-resolution stages that work
    concurrently on successive samples. A front-end sample-and-hold captures the input. In each
    stage a sub-ADC coarsely quantizes the signal, a sub-DAC converts those bits back, a
    subtractor forms the residue, and a residue amplifier scales it for the next stage. Stages 2
    to N−1 repeat this, and a final flash ADC resolves the last bits. Delay alignment registers
    line up the bits of each sample, and digital error correction combines the redundant bits
    into the output code.""",
    ["Analog Input", "Front-End Sample-and-Hold", "Sub-ADC", "Sub-DAC", "Σ Subtractor",
     "Residue Amplifier ×2", "Stage 2", "Stage N−1", "Flash ADC (Stage N)",
     "Delay Alignment Registers", "Digital Error Correction", "Digital Output"],
    ["Analog Input -> Front-End Sample-and-Hold -> Sub-ADC -> Sub-DAC -> Σ Subtractor -> "
     "Residue Amplifier ×2 -> Stage 2 -> Stage N−1 -> Flash ADC (Stage N)",
     "Front-End Sample-and-Hold -> Σ Subtractor",
     "Sub-ADC -> Delay Alignment Registers | bits",
     "Stage 2 -> Delay Alignment Registers | bits",
     "Stage N−1 -> Delay Alignment Registers | bits",
     "Flash ADC (Stage N) -> Delay Alignment Registers | bits",
     "Delay Alignment Registers -> Digital Error Correction -> Digital Output"],
    [G("Stage 1", ("Sub-ADC", "Sub-DAC", "Σ Subtractor", "Residue Amplifier ×2"))],
    reference="S. H. Lewis and P. R. Gray. A pipelined 5-Msample/s 9-bit analog-to-digital "
    "converter. IEEE Journal of Solid-State Circuits 22(6):954-961, 1987.",
)
item(
    "ic_sigma_delta", IC, "A Telemetering System by Code Modulation — Δ-Σ Modulation", 1962, "",
    LR,
    """A first-order sigma-delta (ΔΣ) ADC trades resolution for oversampling and noise shaping.
    The summing node subtracts the 1-bit DAC feedback from the analog input, and an integrator
    accumulates the difference. A 1-bit quantizer (a clocked comparator) turns the integrator
    output into a high-rate bitstream, which also drives the 1-bit DAC in the feedback loop. A
    digital decimation filter low-pass filters and downsamples the bitstream into
    multi-bit digital output words.""",
    ["Analog Input x(t)", "Σ", "Integrator ∫", "1-bit Quantizer", "Bitstream y[n]",
     "1-bit DAC", "Decimation Filter", "Digital Output"],
    ["Analog Input x(t) -> Σ | +",
     "Σ -> Integrator ∫ -> 1-bit Quantizer -> Bitstream y[n] -> Decimation Filter -> "
     "Digital Output",
     "Bitstream y[n] -> 1-bit DAC -> Σ | −"],
    [G("ΔΣ Modulator", ("Σ", "Integrator ∫", "1-bit Quantizer", "1-bit DAC"))],
    reference="H. Inose, Y. Yasuda and J. Murakami. A Telemetering System by Code Modulation — "
    "Δ-Σ Modulation. IRE Transactions on Space Electronics and Telemetry SET-8(3):204-209, 1962.",
)
item(
    "ic_charge_pump_pll", IC, "Charge-Pump Phase-Lock Loops", 1980, "", LR,
    """A charge-pump phase-locked loop (PLL) locks a VCO to a multiple of a reference clock. The
    phase-frequency detector (PFD) compares the reference clock with the divided VCO output and
    emits UP/DN pulses. The charge pump turns the pulses into a current into the loop filter,
    whose voltage tunes the VCO. The frequency divider divides the output clock by N and feeds it
    back to the PFD, so in lock the output frequency is N times the reference.""",
    ["Reference Clock f_ref", "Phase-Frequency Detector", "Charge Pump", "Loop Filter", "VCO",
     "Output Clock f_out", "Frequency Divider ÷N"],
    ["Reference Clock f_ref -> Phase-Frequency Detector -> Charge Pump | UP/DN",
     "Charge Pump -> Loop Filter | I_cp",
     "Loop Filter -> VCO | V_ctrl",
     "VCO -> Output Clock f_out",
     "VCO -> Frequency Divider ÷N -> Phase-Frequency Detector | f_out/N"],
    reference="F. M. Gardner. Charge-Pump Phase-Lock Loops. IEEE Transactions on "
    "Communications 28(11):1849-1858, 1980.",
)
item(
    "ic_ldo_regulator", IC, "A low-voltage, low quiescent current, low drop-out regulator", 1998,
    "", TB,
    """A low drop-out (LDO) regulator holds its output at a fixed voltage with a series pass
    device. A bandgap reference provides V_REF to an error amplifier. The error amplifier drives
    the gate of a PMOS pass transistor between the unregulated input and the regulated output. A
    resistive feedback divider senses V_OUT and returns a scaled copy to the error amplifier,
    closing the regulation loop, and the output supplies the load.""",
    ["Unregulated Input V_IN", "Bandgap Reference V_REF", "Error Amplifier",
     "PMOS Pass Transistor", "Regulated Output V_OUT", "Feedback Divider R1/R2", "Load"],
    ["Bandgap Reference V_REF -> Error Amplifier -> PMOS Pass Transistor | gate drive",
     "Unregulated Input V_IN -> PMOS Pass Transistor -> Regulated Output V_OUT -> Load",
     "Regulated Output V_OUT -> Feedback Divider R1/R2 -> Error Amplifier | V_FB"],
    reference="G. A. Rincon-Mora and P. E. Allen. A low-voltage, low quiescent current, low "
    "drop-out regulator. IEEE Journal of Solid-State Circuits 33(1):36-44, 1998.",
)
item(
    "ic_riscv_5stage_pipeline", IC,
    "Computer Organization and Design RISC-V Edition: The Hardware Software Interface", 2017, "",
    LR,
    """The classic five-stage RISC-V pipeline overlaps instruction fetch (IF), decode (ID),
    execute (EX), memory access (MEM) and write-back (WB), separated by the IF/ID, ID/EX, EX/MEM
    and MEM/WB pipeline registers. IF reads the instruction memory at the PC and computes PC + 4;
    ID reads the register file and generates the immediate and control signals. EX selects ALU
    operands through forwarding and ALUSrc multiplexers, runs the ALU and computes the branch
    target, MEM accesses data memory and resolves the next PC, and WB writes the MemtoReg mux
    result back to the register file. A forwarding unit routes EX/MEM and MEM/WB results to the
    ALU inputs, and a hazard detection unit stalls the PC and IF/ID register on load-use
    hazards.""",
    ["PC", "Instruction Memory", "PC + 4 Adder", "PC Source Mux", "IF/ID Register",
     "Register File", "Immediate Generator", "Control Unit", "Hazard Detection Unit",
     "ID/EX Register", "Forwarding Unit", "Forward A Mux", "Forward B Mux", "ALUSrc Mux",
     "ALU Control", "ALU", "Branch Target Adder", "EX/MEM Register", "Data Memory",
     "MEM/WB Register", "MemtoReg Mux"],
    ["PC -> Instruction Memory -> IF/ID Register",
     "PC -> PC + 4 Adder -> PC Source Mux -> PC",
     "PC -> IF/ID Register",
     "IF/ID Register -> Register File | rs1, rs2",
     "IF/ID Register -> Immediate Generator",
     "IF/ID Register -> Control Unit | opcode",
     "IF/ID Register -> Hazard Detection Unit",
     "IF/ID Register -> ID/EX Register | PC, rd",
     "Register File -> ID/EX Register",
     "Immediate Generator -> ID/EX Register",
     "Control Unit -> ID/EX Register",
     "Hazard Detection Unit -> PC | PCWrite",
     "Hazard Detection Unit -> IF/ID Register | IF/IDWrite",
     "Hazard Detection Unit -> ID/EX Register | bubble",
     "ID/EX Register -> Hazard Detection Unit | MemRead, rd",
     "ID/EX Register -> Forward A Mux -> ALU",
     "ID/EX Register -> Forward B Mux -> ALUSrc Mux -> ALU",
     "ID/EX Register -> ALUSrc Mux | imm",
     "ID/EX Register -> ALU Control -> ALU",
     "ID/EX Register -> Forwarding Unit | rs1, rs2",
     "ID/EX Register -> Branch Target Adder -> EX/MEM Register",
     "ID/EX Register -> EX/MEM Register | control, rd",
     "ALU -> EX/MEM Register",
     "Forward B Mux -> EX/MEM Register | store data",
     "EX/MEM Register -> Data Memory -> MEM/WB Register",
     "EX/MEM Register -> MEM/WB Register | ALU result",
     "EX/MEM Register -> PC Source Mux | branch target",
     "EX/MEM Register -> Forwarding Unit | rd, RegWrite",
     "EX/MEM Register -> Forward A Mux",
     "EX/MEM Register -> Forward B Mux",
     "Forwarding Unit -> Forward A Mux | ForwardA",
     "Forwarding Unit -> Forward B Mux | ForwardB",
     "MEM/WB Register -> MemtoReg Mux -> Register File | write data",
     "MEM/WB Register -> Forwarding Unit | rd, RegWrite",
     "MemtoReg Mux -> Forward A Mux",
     "MemtoReg Mux -> Forward B Mux"],
    [G("IF", ("PC", "Instruction Memory", "PC + 4 Adder", "PC Source Mux")),
     G("ID", ("Register File", "Immediate Generator", "Control Unit", "Hazard Detection Unit")),
     G("EX", ("Forwarding Unit", "Forward A Mux", "Forward B Mux", "ALUSrc Mux", "ALU Control",
              "ALU", "Branch Target Adder")),
     G("MEM", ("Data Memory",)),
     G("WB", ("MemtoReg Mux",))],
    reference="D. A. Patterson and J. L. Hennessy. Computer Organization and Design RISC-V "
    "Edition: The Hardware Software Interface. Morgan Kaufmann, 2017. Chapter 4.",
)
item(
    "ic_tpu_systolic_array", IC,
    "In-Datacenter Performance Analysis of a Tensor Processing Unit", 2017, "1704.04760", LR,
    """The first TPU is an inference accelerator built around a 256x256 systolic matrix multiply
    unit. The host sends instructions and data over a PCIe Gen3 x16 interface to the host
    interface, which fills the unified buffer with activations and passes instructions to the
    control logic. Weights stream from off-chip DDR3 DRAM through a weight FIFO into the matrix
    multiply unit, while systolic data setup feeds it activations from the unified buffer. Partial
    sums collect in the accumulators, pass through the activation and normalize/pool units, and are
    written back to the unified buffer, from which results return to the host.""",
    ["PCIe Gen3 x16 Interface", "Host Interface", "Control", "Unified Buffer",
     "Systolic Data Setup", "Matrix Multiply Unit", "Accumulators", "Activation",
     "Normalize / Pool", "DDR3 DRAM", "Weight FIFO"],
    ["PCIe Gen3 x16 Interface -> Host Interface -> Unified Buffer -> Systolic Data Setup -> "
     "Matrix Multiply Unit -> Accumulators -> Activation -> Normalize / Pool -> Unified Buffer",
     "Host Interface -> Control | instructions",
     "Control -> Matrix Multiply Unit",
     "DDR3 DRAM -> Weight FIFO -> Matrix Multiply Unit | weights",
     "Unified Buffer -> Host Interface | results"],
)
item(
    "ic_bandgap_reference", IC, "New developments in IC voltage regulation", 1971, "", LR,
    """A bandgap reference cancels the temperature dependence of a base-emitter voltage. The
    V_BE of bipolar transistor Q1 falls with temperature (CTAT). Running Q1 and a larger
    transistor Q2 (N× area) at equal currents gives a difference ΔV_BE = V_T ln N that rises with
    temperature (PTAT). The PTAT term is scaled by a gain K and summed with V_BE so that the
    slopes cancel, producing a reference voltage V_REF near the silicon bandgap of about
    1.2 V.""",
    ["Bipolar Transistor Q1 (1×)", "Bipolar Transistor Q2 (N×)", "V_BE (CTAT)",
     "ΔV_BE (PTAT)", "Gain K", "Σ", "V_REF ≈ 1.2 V"],
    ["Bipolar Transistor Q1 (1×) -> V_BE (CTAT) -> Σ",
     "Bipolar Transistor Q1 (1×) -> ΔV_BE (PTAT)",
     "Bipolar Transistor Q2 (N×) -> ΔV_BE (PTAT) -> Gain K -> Σ -> V_REF ≈ 1.2 V"],
    reference="R. J. Widlar. New developments in IC voltage regulation. IEEE Journal of "
    "Solid-State Circuits 6(1):2-7, 1971.",
)
item(
    "ic_flash_adc", IC, "Analog Integrated Circuit Design", 1997, "", TB,
    """A flash ADC converts in a single step with one comparator per quantization level. A
    resistor ladder divides the reference voltage into 2^N − 1 thresholds. Each comparator
    compares the analog input with its own threshold, and together their outputs form a
    thermometer code. Bubble error correction removes isolated wrong bits, and a
    thermometer-to-binary encoder produces the N-bit digital output.""",
    ["Analog Input V_in", "Reference V_ref", "Resistor Ladder", "Comparator 1",
     "Comparator 2", "Comparator 2^N − 1", "Thermometer Code", "Bubble Error Correction",
     "Thermometer-to-Binary Encoder", "N-bit Digital Output"],
    ["Reference V_ref -> Resistor Ladder",
     "Resistor Ladder -> Comparator 1 -> Thermometer Code",
     "Resistor Ladder -> Comparator 2 -> Thermometer Code",
     "Resistor Ladder -> Comparator 2^N − 1 -> Thermometer Code",
     "Analog Input V_in -> Comparator 1",
     "Analog Input V_in -> Comparator 2",
     "Analog Input V_in -> Comparator 2^N − 1",
     "Thermometer Code -> Bubble Error Correction -> Thermometer-to-Binary Encoder -> "
     "N-bit Digital Output"],
    [G("Comparator Bank", ("Comparator 1", "Comparator 2", "Comparator 2^N − 1"))],
    reference="D. A. Johns and K. Martin. Analog Integrated Circuit Design. Wiley, 1997. "
    "Chapter 13 (Nyquist-rate A/D converters: flash converters).",
)
item(
    "ic_buck_converter", IC, "Fundamentals of Power Electronics", 2001, "", LR,
    """A voltage-mode controlled buck converter steps a DC input down with a switched power
    stage. The power switches chop the input voltage, and an LC output filter averages the
    switched waveform into the output voltage that supplies the load. A feedback divider scales
    the output, and an error amplifier compares it with a reference voltage. A compensation
    network shapes the error signal, and a PWM comparator compares it with a sawtooth ramp to
    set the duty cycle. A gate driver turns the duty cycle into switch drive, closing the
    loop.""",
    ["Input Voltage V_in", "Power Switches", "LC Output Filter", "Output Voltage V_out", "Load",
     "Feedback Divider", "Reference V_ref", "Error Amplifier", "Compensation Network",
     "Ramp Generator", "PWM Comparator", "Gate Driver"],
    ["Input Voltage V_in -> Power Switches -> LC Output Filter -> Output Voltage V_out -> Load",
     "Output Voltage V_out -> Feedback Divider -> Error Amplifier",
     "Reference V_ref -> Error Amplifier -> Compensation Network -> PWM Comparator",
     "Ramp Generator -> PWM Comparator",
     "PWM Comparator -> Gate Driver | duty cycle d",
     "Gate Driver -> Power Switches"],
    [G("Power Stage", ("Power Switches", "LC Output Filter")),
     G("Voltage-Mode Controller", ("Reference V_ref", "Error Amplifier", "Compensation Network",
                                   "Ramp Generator", "PWM Comparator", "Gate Driver"))],
    reference="R. W. Erickson and D. Maksimović. Fundamentals of Power Electronics, 2nd ed. "
    "Kluwer Academic, 2001.",
)
item(
    "ic_eyeriss", IC,
    "Eyeriss: An Energy-Efficient Reconfigurable Accelerator for Deep Convolutional Neural "
    "Networks", 2017, "", LR,
    """Eyeriss is a CNN accelerator that minimizes data movement with a row-stationary dataflow on
    a spatial array of processing elements. Input feature maps and filters arrive from off-chip
    DRAM, and compressed feature maps are decoded by a run-length (RLC) decoder into the 108 KB
    global buffer. The global buffer feeds filters, input feature maps and partial sums to the
    12 × 14 PE array and takes partial sums back. Output feature maps pass through ReLU and are
    compressed by the RLC encoder before being written to DRAM. A top-level controller sequences
    the buffer, and a configuration scan chain sets up the PE array for each layer.""",
    ["Off-Chip DRAM", "RLC Decoder", "Global Buffer (108 KB)", "PE Array (12 × 14)", "ReLU",
     "RLC Encoder", "Top-Level Control", "Config Scan Chain"],
    ["Off-Chip DRAM -> RLC Decoder -> Global Buffer (108 KB) | ifmaps",
     "Off-Chip DRAM -> Global Buffer (108 KB) | filters",
     "Global Buffer (108 KB) -> PE Array (12 × 14) | filter, ifmap, psum",
     "PE Array (12 × 14) -> Global Buffer (108 KB) | psum",
     "PE Array (12 × 14) -> ReLU -> RLC Encoder -> Off-Chip DRAM | ofmaps",
     "Top-Level Control -> Global Buffer (108 KB)",
     "Config Scan Chain -> PE Array (12 × 14)"],
    [G("Eyeriss Chip", ("RLC Decoder", "Global Buffer (108 KB)", "PE Array (12 × 14)", "ReLU",
                        "RLC Encoder", "Top-Level Control", "Config Scan Chain"))],
    reference="Y.-H. Chen, T. Krishna, J. S. Emer and V. Sze. Eyeriss: An Energy-Efficient "
    "Reconfigurable Accelerator for Deep Convolutional Neural Networks. IEEE Journal of "
    "Solid-State Circuits 52(1):127-138, 2017.",
)
item(
    "ic_two_stage_opamp", IC, "MOS operational amplifier design — a tutorial overview", 1982, "",
    LR,
    """The two-stage Miller-compensated CMOS op amp is the standard general-purpose amplifier.
    A differential pair M1/M2, biased by a tail current source M5, amplifies the difference
    between the inverting and non-inverting inputs into a current-mirror load M3/M4. The
    single-ended first-stage output drives a common-source second stage M6 with a current-source
    load M7, which sets the output. A Miller capacitor C_C from the output back to the input of
    the second stage provides pole-splitting frequency compensation, and a bias network sets the
    tail and load currents.""",
    ["Inverting Input V−", "Non-inverting Input V+", "Differential Pair M1/M2",
     "Tail Current Source M5", "Current-Mirror Load M3/M4", "Common-Source Stage M6",
     "Current-Source Load M7", "Miller Capacitor C_C", "Bias Network", "Output V_out"],
    ["Inverting Input V− -> Differential Pair M1/M2",
     "Non-inverting Input V+ -> Differential Pair M1/M2",
     "Tail Current Source M5 -> Differential Pair M1/M2",
     "Differential Pair M1/M2 -> Current-Mirror Load M3/M4 -> Common-Source Stage M6 -> "
     "Output V_out",
     "Current-Source Load M7 -> Output V_out",
     "Output V_out -> Miller Capacitor C_C -> Common-Source Stage M6",
     "Bias Network -> Tail Current Source M5",
     "Bias Network -> Current-Source Load M7"],
    [G("First Stage", ("Differential Pair M1/M2", "Tail Current Source M5",
                       "Current-Mirror Load M3/M4")),
     G("Second Stage", ("Common-Source Stage M6", "Current-Source Load M7"))],
    reference="P. R. Gray and R. G. Meyer. MOS operational amplifier design — a tutorial "
    "overview. IEEE Journal of Solid-State Circuits 17(6):969-982, 1982.",
)


# ====================================================================== robotics
item(
    "rob_diffusion_policy", ROB, "Diffusion Policy: Visuomotor Policy Learning via Action Diffusion",
    2023, "2303.04137", LR,
    """Diffusion Policy generates robot action sequences with a conditional denoising diffusion
    process. Observation images are encoded by a ResNet-18 visual encoder and combined with robot
    proprioception into observation features O_t. Starting from Gaussian noise, a noise prediction
    network ε_θ conditioned on O_t predicts the noise, and a DDPM denoising step removes it; this
    repeats K times to yield the action sequence A_t. The robot executes the first T_a steps in the
    environment, new observations are taken, and planning repeats in a receding-horizon loop.""",
    ["Observation Images", "Robot Proprioception", "Visual Encoder (ResNet-18)",
     "Observation Features O_t", "Gaussian Noise A_t^K", "Noise Prediction Network ε_θ",
     "DDPM Denoising Step", "Action Sequence A_t", "Execute T_a Steps", "Environment"],
    ["Observation Images -> Visual Encoder (ResNet-18) -> Observation Features O_t",
     "Robot Proprioception -> Observation Features O_t",
     "Observation Features O_t -> Noise Prediction Network ε_θ | FiLM conditioning",
     "Gaussian Noise A_t^K -> Noise Prediction Network ε_θ -> DDPM Denoising Step",
     "DDPM Denoising Step -> Noise Prediction Network ε_θ | K iterations | dashed",
     "DDPM Denoising Step -> Action Sequence A_t -> Execute T_a Steps -> Environment",
     "Environment -> Observation Images",
     "Environment -> Robot Proprioception"],
)
item(
    "rob_rt1", ROB, "RT-1: Robotics Transformer for Real-World Control at Scale", 2022,
    "2212.06817", LR,
    """RT-1 maps a language instruction and a short image history to discretized robot actions.
    The instruction is embedded by the Universal Sentence Encoder, and the embedding conditions a
    FiLM EfficientNet-B3 that processes each of the six history images. TokenLearner compresses
    the resulting visual tokens, and a decoder-only Transformer attends over them. The Transformer
    outputs action tokens, which are decoded into the mode, arm and base actions.""",
    ["Instruction", "Universal Sentence Encoder", "Images (6 frames)", "FiLM EfficientNet-B3",
     "TokenLearner", "Transformer", "Action Tokens", "Mode", "Arm", "Base"],
    ["Instruction -> Universal Sentence Encoder -> FiLM EfficientNet-B3",
     "Images (6 frames) -> FiLM EfficientNet-B3 -> TokenLearner -> Transformer -> Action Tokens",
     "Action Tokens -> Mode",
     "Action Tokens -> Arm",
     "Action Tokens -> Base"],
)
item(
    "rob_orb_slam", ROB, "ORB-SLAM: a Versatile and Accurate Monocular SLAM System", 2015,
    "1502.00956", LR,
    """ORB-SLAM runs three parallel threads around a shared map and a place recognition module.
    Tracking extracts ORB features from each frame, estimates an initial pose from the last frame
    or by relocalization, tracks the local map and decides whether to insert a new keyframe. Local
    mapping inserts the keyframe, culls recent map points, creates new points, runs local bundle
    adjustment and culls redundant keyframes. Loop closing queries the recognition database,
    computes a Sim3 transform for a loop candidate, fuses the loop and optimizes the essential
    graph. The map stores map points, keyframes, the covisibility graph and the spanning tree,
    and place recognition holds the visual vocabulary and the keyframe recognition database.""",
    ["Frame", "Extract ORB", "Initial Pose Estimation", "Track Local Map",
     "New KeyFrame Decision", "KeyFrame Insertion", "Recent MapPoints Culling",
     "New Points Creation", "Local BA", "Local KeyFrames Culling", "Query Database",
     "Compute Sim3", "Loop Fusion", "Optimize Essential Graph", "MapPoints", "KeyFrames",
     "Covisibility Graph", "Spanning Tree", "Visual Vocabulary", "Recognition Database"],
    ["Frame -> Extract ORB -> Initial Pose Estimation -> Track Local Map -> "
     "New KeyFrame Decision",
     "New KeyFrame Decision -> KeyFrame Insertion | KeyFrame",
     "KeyFrame Insertion -> Recent MapPoints Culling -> New Points Creation -> Local BA -> "
     "Local KeyFrames Culling",
     "Local KeyFrames Culling -> Query Database | KeyFrame",
     "Query Database -> Compute Sim3 -> Loop Fusion -> Optimize Essential Graph",
     "MapPoints -> Track Local Map",
     "Covisibility Graph -> Track Local Map",
     "KeyFrame Insertion -> KeyFrames",
     "KeyFrame Insertion -> Covisibility Graph",
     "KeyFrame Insertion -> Spanning Tree",
     "KeyFrame Insertion -> Recognition Database",
     "New Points Creation -> MapPoints",
     "Local BA -> MapPoints",
     "Local BA -> KeyFrames",
     "Loop Fusion -> MapPoints",
     "Loop Fusion -> Covisibility Graph",
     "Spanning Tree -> Optimize Essential Graph",
     "Covisibility Graph -> Optimize Essential Graph",
     "Optimize Essential Graph -> KeyFrames",
     "Visual Vocabulary -> Recognition Database",
     "Recognition Database -> Initial Pose Estimation | relocalization",
     "Recognition Database -> Query Database"],
    [G("TRACKING", ("Extract ORB", "Initial Pose Estimation", "Track Local Map",
                    "New KeyFrame Decision")),
     G("LOCAL MAPPING", ("KeyFrame Insertion", "Recent MapPoints Culling",
                         "New Points Creation", "Local BA", "Local KeyFrames Culling")),
     G("LOOP CLOSING", ()),
     G("Loop Detection", ("Query Database", "Compute Sim3"), parent="LOOP CLOSING"),
     G("Loop Correction", ("Loop Fusion", "Optimize Essential Graph"), parent="LOOP CLOSING"),
     G("MAP", ("MapPoints", "KeyFrames", "Covisibility Graph", "Spanning Tree")),
     G("PLACE RECOGNITION", ("Visual Vocabulary", "Recognition Database"))],
)
item(
    "rob_mpc", ROB, "Constrained model predictive control: Stability and optimality", 2000, "", LR,
    """Model predictive control repeatedly solves a finite-horizon optimal control problem
    online. An optimizer (a QP solver) minimizes a cost function over a future input sequence,
    subject to constraints, using a prediction model of the plant to forecast its response from
    the current state and to track the reference trajectory. Of the optimal input sequence, only
    the first control input u_0 is applied to the plant. Sensors measure the plant, a state
    estimator updates the state estimate, and the optimization is solved again at the next step
    in a receding-horizon loop.""",
    ["Reference Trajectory", "Cost Function", "Constraints", "Prediction Model",
     "Optimizer (QP Solver)", "Optimal Input Sequence", "First Control Input u_0",
     "Plant (Robot)", "Sensors", "State Estimator"],
    ["Reference Trajectory -> Optimizer (QP Solver)",
     "Cost Function -> Optimizer (QP Solver)",
     "Constraints -> Optimizer (QP Solver)",
     "Optimizer (QP Solver) -> Prediction Model | candidate inputs",
     "Prediction Model -> Optimizer (QP Solver) | predicted states",
     "Optimizer (QP Solver) -> Optimal Input Sequence -> First Control Input u_0 -> "
     "Plant (Robot) -> Sensors -> State Estimator",
     "State Estimator -> Prediction Model | x̂_k"],
    [G("MPC Controller", ("Cost Function", "Constraints", "Prediction Model",
                          "Optimizer (QP Solver)", "Optimal Input Sequence"))],
    reference="D. Q. Mayne, J. B. Rawlings, C. V. Rao and P. O. M. Scokaert. Constrained model "
    "predictive control: Stability and optimality. Automatica 36(6):789-814, 2000.",
)
item(
    "rob_visuomotor_policy", ROB, "End-to-End Training of Deep Visuomotor Policies", 2015,
    "1504.00702", LR,
    """This visuomotor policy maps raw camera images and the robot state directly to motor
    torques. An RGB image passes through three convolutional layers, conv1 to conv3. A spatial
    softmax and an expected-position layer turn each feature map into 2D image feature points. The
    feature points are concatenated with the robot configuration and passed through two fully
    connected ReLU layers and a linear output layer that outputs the motor torques.""",
    ["RGB Image", "conv1 7×7 (64)", "conv2 5×5 (32)", "conv3 5×5 (32)", "Spatial Softmax",
     "Feature Points", "Robot Configuration", "FC 40 ReLU (1)", "FC 40 ReLU (2)",
     "Linear Output", "Motor Torques"],
    ["RGB Image -> conv1 7×7 (64) -> conv2 5×5 (32) -> conv3 5×5 (32) -> Spatial Softmax -> "
     "Feature Points -> FC 40 ReLU (1)",
     "Robot Configuration -> FC 40 ReLU (1)",
     "FC 40 ReLU (1) -> FC 40 ReLU (2) -> Linear Output -> Motor Torques"],
)
item(
    "rob_domain_randomization", ROB,
    "Domain Randomization for Transferring Deep Neural Networks from Simulation to the Real World",
    2017, "1703.06907", LR,
    """Domain randomization trains an object localizer purely on simulated images and transfers
    it to a real robot. A simulator renderer produces synthetic training images while textures,
    lighting, camera pose and distractor objects are randomized for every image. An object
    localization CNN is trained on the synthetic images to regress object positions. At test time
    the CNN receives real camera images, and its object position estimates are used for robotic
    grasping.""",
    ["Random Textures", "Random Lighting", "Random Camera Pose", "Distractor Objects",
     "MuJoCo Renderer", "Synthetic Training Images", "Object Localization CNN",
     "Real Camera Image", "Object Position (x, y, z)", "Robot Grasp Execution"],
    ["Random Textures -> MuJoCo Renderer",
     "Random Lighting -> MuJoCo Renderer",
     "Random Camera Pose -> MuJoCo Renderer",
     "Distractor Objects -> MuJoCo Renderer",
     "MuJoCo Renderer -> Synthetic Training Images -> Object Localization CNN | training",
     "Real Camera Image -> Object Localization CNN -> Object Position (x, y, z) -> "
     "Robot Grasp Execution"],
    [G("Simulation (training)", ("Random Textures", "Random Lighting", "Random Camera Pose",
                                 "Distractor Objects", "MuJoCo Renderer",
                                 "Synthetic Training Images")),
     G("Real World (test)", ("Real Camera Image", "Object Position (x, y, z)",
                             "Robot Grasp Execution"))],
)
item(
    "rob_ekf_localization", ROB, "Probabilistic Robotics", 2005, "", LR,
    """EKF localization tracks a Gaussian belief over the robot pose with a predict-update cycle.
    The prediction step propagates the prior belief through the linearized motion model using
    the control input u_t, giving the predicted belief. The measurement prediction step uses the
    landmark map to predict what the sensor should see and its Jacobian. The Kalman gain weighs
    the predicted uncertainty against the measurement noise, and the measurement update corrects
    the predicted belief with the innovation between the sensor measurement z_t and the prediction.
    The resulting posterior belief becomes the prior for the next time step.""",
    ["Control Input u_t", "Prior Belief (μ, Σ)", "Motion Model Prediction",
     "Predicted Belief (μ̄, Σ̄)", "Landmark Map", "Measurement Prediction", "Kalman Gain K_t",
     "Sensor Measurement z_t", "Measurement Update", "Posterior Belief"],
    ["Prior Belief (μ, Σ) -> Motion Model Prediction -> Predicted Belief (μ̄, Σ̄) -> "
     "Measurement Prediction -> Kalman Gain K_t -> Measurement Update -> Posterior Belief",
     "Control Input u_t -> Motion Model Prediction",
     "Landmark Map -> Measurement Prediction",
     "Predicted Belief (μ̄, Σ̄) -> Kalman Gain K_t",
     "Predicted Belief (μ̄, Σ̄) -> Measurement Update",
     "Measurement Prediction -> Measurement Update | ẑ_t",
     "Sensor Measurement z_t -> Measurement Update",
     "Posterior Belief -> Prior Belief (μ, Σ) | t ← t+1 | dashed"],
    [G("Prediction", ("Motion Model Prediction", "Predicted Belief (μ̄, Σ̄)")),
     G("Correction", ("Measurement Prediction", "Kalman Gain K_t", "Measurement Update"))],
    reference="S. Thrun, W. Burgard and D. Fox. Probabilistic Robotics. MIT Press, 2005. "
    "Chapter 7 (EKF localization).",
)
item(
    "rob_sense_plan_act", ROB, "A Robust Layered Control System for a Mobile Robot", 1986, "", LR,
    """The traditional control architecture of a mobile robot decomposes it into a chain of
    functional modules, as drawn by Brooks to contrast it with his subsumption architecture.
    Sensor data flow through perception and modelling, which build a world model. Planning
    chooses what to do, task execution sequences the plan, and motor control commands the
    actuators. Every module must work before the robot can act at all, which motivated layered,
    behaviour-based alternatives.""",
    ["sensors", "perception", "modelling", "planning", "task execution", "motor control",
     "actuators"],
    ["sensors -> perception -> modelling -> planning -> task execution -> motor control -> "
     "actuators"],
    reference="R. A. Brooks. A Robust Layered Control System for a Mobile Robot. IEEE Journal of "
    "Robotics and Automation 2(1):14-23, 1986. Figure 1.",
)
item(
    "rob_saycan", ROB, "Do As I Can, Not As I Say: Grounding Language in Robotic Affordances", 2022,
    "2204.01691", LR,
    """SayCan grounds a large language model in what a robot can actually do. The user
    instruction and the history of executed skills form the prompt, and the LLM scores how useful
    each skill's description is for the task (Say). Affordance value functions score how likely
    each skill is to succeed from the current observation (Can). The two scores are multiplied,
    the highest-scoring skill is selected and executed by its low-level skill policy on the robot,
    and the selected skill is appended to the prompt before the next step.""",
    ["User Instruction", "Prompt with Skill History", "LLM", "Task-Grounding Scores (Say)",
     "Current Observation", "Affordance Value Functions", "World-Grounding Scores (Can)",
     "Combined Score ×", "Selected Skill", "Low-Level Skill Policy", "Robot"],
    ["User Instruction -> Prompt with Skill History -> LLM -> Task-Grounding Scores (Say) -> "
     "Combined Score ×",
     "Current Observation -> Affordance Value Functions -> World-Grounding Scores (Can) -> "
     "Combined Score ×",
     "Combined Score × -> Selected Skill -> Low-Level Skill Policy -> Robot -> "
     "Current Observation",
     "Selected Skill -> Prompt with Skill History | append | dashed"],
    [G("Say (LLM)", ("LLM", "Task-Grounding Scores (Say)")),
     G("Can (Value Functions)", ("Affordance Value Functions", "World-Grounding Scores (Can)"))],
)
item(
    "rob_act", ROB, "Learning Fine-Grained Bimanual Manipulation with Low-Cost Hardware", 2023,
    "2304.13705", LR,
    """Action Chunking with Transformers (ACT) trains a policy as the decoder of a conditional VAE
    that predicts a chunk of future actions. During training, a CVAE transformer encoder reads a
    [CLS] token, the joint positions and the demonstrated action sequence and outputs a style
    variable z. The policy encodes images from four cameras with ResNet18 backbones and feeds the
    features, the joint positions and z to a transformer encoder. A transformer decoder queries
    the encoder output with fixed position embeddings and outputs the predicted action chunk.""",
    ["[CLS] Token", "Joint Positions", "Action Sequence a_t:t+k", "CVAE Transformer Encoder",
     "Style Variable z", "Images (4 cameras)", "ResNet18 Backbones", "Transformer Encoder",
     "Position Embeddings", "Transformer Decoder", "Predicted Action Chunk"],
    ["[CLS] Token -> CVAE Transformer Encoder",
     "Joint Positions -> CVAE Transformer Encoder",
     "Action Sequence a_t:t+k -> CVAE Transformer Encoder -> Style Variable z -> "
     "Transformer Encoder",
     "Joint Positions -> Transformer Encoder",
     "Images (4 cameras) -> ResNet18 Backbones -> Transformer Encoder -> Transformer Decoder",
     "Position Embeddings -> Transformer Decoder | queries",
     "Transformer Decoder -> Predicted Action Chunk"],
    [G("CVAE Encoder (training only)", ("[CLS] Token", "Action Sequence a_t:t+k",
                                        "CVAE Transformer Encoder")),
     G("CVAE Decoder (policy)", ("ResNet18 Backbones", "Transformer Encoder",
                                 "Position Embeddings", "Transformer Decoder"))],
)
item(
    "rob_rrt", ROB, "Rapidly-Exploring Random Trees: A New Tool for Path Planning", 1998, "", TB,
    """A rapidly-exploring random tree (RRT) plans a path by growing a tree from the start
    configuration into free space. Each iteration draws a random sample, finds the nearest node
    of the search tree, and steers a short step from it toward the sample. A collision check
    against the obstacle map rejects the step or adds the new node to the tree. If the new node
    reaches the goal region the path is extracted by following parents back through the tree;
    otherwise sampling continues.""",
    ["Start Configuration", "Search Tree T", "Random Sample x_rand", "Nearest Node x_near",
     "Steer Toward x_rand", "Obstacle Map", "Collision Check", "Add x_new to T",
     "Goal Reached?", "Extract Path"],
    ["Start Configuration -> Search Tree T -> Nearest Node x_near",
     "Random Sample x_rand -> Nearest Node x_near -> Steer Toward x_rand -> Collision Check",
     "Obstacle Map -> Collision Check",
     "Collision Check -> Add x_new to T | collision-free",
     "Collision Check -> Random Sample x_rand | in collision | dashed",
     "Add x_new to T -> Search Tree T",
     "Add x_new to T -> Goal Reached?",
     "Goal Reached? -> Random Sample x_rand | no",
     "Goal Reached? -> Extract Path | yes",
     "Search Tree T -> Extract Path"],
    reference="S. M. LaValle. Rapidly-Exploring Random Trees: A New Tool for Path Planning. "
    "Technical Report TR 98-11, Computer Science Department, Iowa State University, 1998.",
)
item(
    "rob_anymal_actuator_net", ROB, "Learning agile and dynamic motor skills for legged robots",
    2019, "1901.08652", LR,
    """This work trains locomotion policies for the ANYmal quadruped in simulation and transfers
    them to the real robot. A rigid-body simulator is built from the robot's CAD model, and an
    actuator network is trained by supervised learning on real actuator data to map joint position
    targets to joint torques. In simulation, the control policy outputs joint position targets,
    the actuator network converts them to torques, and the rigid-body simulator produces the next
    robot state, which is fed back to the policy. A reward computed from the state drives RL
    training (TRPO) of the policy, and the trained policy is deployed on the real ANYmal.""",
    ["CAD Model", "Rigid-Body Simulator", "Real Actuator Data", "Supervised Learning",
     "Actuator Network", "Control Policy", "Joint Position Targets", "Joint Torques",
     "Robot State", "Reward", "RL Training (TRPO)", "Real ANYmal Robot"],
    ["CAD Model -> Rigid-Body Simulator",
     "Real Actuator Data -> Supervised Learning -> Actuator Network",
     "Control Policy -> Joint Position Targets -> Actuator Network -> Joint Torques -> "
     "Rigid-Body Simulator -> Robot State -> Control Policy",
     "Robot State -> Reward -> RL Training (TRPO) -> Control Policy | update",
     "Control Policy -> Real ANYmal Robot | deploy"],
    [G("1. Modeling the rigid-body domain", ("CAD Model", "Rigid-Body Simulator")),
     G("2. Training the actuator net", ("Real Actuator Data", "Supervised Learning",
                                        "Actuator Network")),
     G("3. Training the control policy", ("Control Policy", "Joint Position Targets",
                                          "Joint Torques", "Robot State", "Reward",
                                          "RL Training (TRPO)")),
     G("4. Deployment", ("Real ANYmal Robot",))],
)


# ======================================================================== build
def _parse_edge(spec: str) -> list[tuple[str, str, str | None, str | None]]:
    """``"A -> B -> C"`` / ``"A -> B | label | style"`` -> ``[(src, dst, label, style), ...]``."""
    path, *attrs = (p.strip() for p in spec.split(" | " if " | " in spec else " || ", 2))
    if " || " in spec and " | " not in spec:
        label, style = None, attrs[0] if attrs else None
    else:
        if "||" in spec:
            raise ValueError(f"mixed '|' and '||' in edge {spec!r}")
        label = attrs[0] if len(attrs) > 0 and attrs[0] else None
        style = attrs[1] if len(attrs) > 1 and attrs[1] else None
    ends = [p.strip() for p in path.split(" -> ")]
    if len(ends) < 2:
        raise ValueError(f"edge {spec!r} has no ' -> '")
    pairs = list(pairwise(ends))
    # a label or style written after a chain belongs to its last arrow
    return [(a, b, None, None) for a, b in pairs[:-1]] + [(*pairs[-1], label, style)]


def build_graph(it: Item) -> DiagramGraph:
    """The validated :class:`DiagramGraph` of one item, with difficulty and prompt filled in."""
    problems: list[str] = []
    if len(set(it.nodes)) != len(it.nodes):
        dup = sorted(k for k, v in Counter(it.nodes).items() if v > 1)
        problems.append(f"duplicate labels {dup}")
    for label in it.nodes:
        if not label.strip() or len(label.split()) > MAX_LABEL_WORDS:
            problems.append(f"label {label!r} is empty or longer than {MAX_LABEL_WORDS} words")
    ids = {label: f"n{i}" for i, label in enumerate(it.nodes, start=1)}
    group_ids = {g.label: f"g{i}" for i, g in enumerate(it.groups, start=1)}
    member_of: dict[str, str] = {}
    for g in it.groups:
        if g.parent is not None and g.parent not in group_ids:
            problems.append(f"group {g.label!r}: unknown parent {g.parent!r}")
        for m in g.members:
            if m not in ids:
                problems.append(f"group {g.label!r}: unknown member {m!r}")
            elif m in member_of:
                problems.append(f"node {m!r} is in two groups")
            else:
                member_of[m] = group_ids[g.label]
    edges: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for spec in it.edges:
        for a, b, label, style in _parse_edge(spec):
            for end in (a, b):
                if end not in ids:
                    problems.append(f"edge {spec!r}: unknown node {end!r}")
            if (a, b) in seen:
                problems.append(f"duplicate edge {a!r} -> {b!r}")
            seen.add((a, b))
            if a not in ids or b not in ids:
                continue
            e: dict[str, Any] = {"source": ids[a], "target": ids[b]}
            if label:
                e["label"] = label
            if style:
                e["style"] = style
            edges.append(e)
    touched = {x for pair in seen for x in pair}
    problems.extend(f"node {n!r} has no edge" for n in it.nodes if n not in touched)
    if it.area not in AREAS:
        problems.append(f"unknown area {it.area!r}")
    if it.layout not in (LR, TB):
        problems.append(f"unknown layout {it.layout!r}")
    if not it.arxiv and not (it.extra.get("doi") or it.extra.get("reference")):
        problems.append("no arxiv id: give doi or reference")
    n_sent = it.description.count(". ") + 1
    if not 3 <= n_sent <= 6:
        problems.append(f"description has about {n_sent} sentences, want 3-6")
    if problems:
        raise ValueError(f"{it.id}:\n  " + "\n  ".join(problems))

    nodes: list[dict[str, Any]] = []
    for label in it.nodes:
        n: dict[str, Any] = {"id": ids[label], "label": label}
        if label in member_of:
            n["group"] = member_of[label]
        nodes.append(n)
    groups: list[dict[str, Any]] = []
    for g in it.groups:
        gd: dict[str, Any] = {"id": group_ids[g.label], "label": g.label}
        if g.parent is not None:
            gd["parent"] = group_ids[g.parent]
        groups.append(gd)
    meta: dict[str, Any] = {
        "area": it.area,
        "difficulty": "",  # filled in below, from the graph itself
        "title": it.title,
        "year": it.year,
        "arxiv": it.arxiv,
    }
    meta.update(it.extra)
    meta.update({"description": it.description, "layout": it.layout, "origin": ORIGIN})
    data: dict[str, Any] = {"id": it.id, "nodes": nodes, "edges": edges}
    if groups:
        data["groups"] = groups
    data["meta"] = {k: v for k, v in meta.items() if k != "difficulty"}
    graph = DiagramGraph.from_dict(data, source=it.id)
    meta["difficulty"] = difficulty(graph)
    graph = dataclasses.replace(graph, meta=meta)
    return dataclasses.replace(graph, prompt=build_prompt(graph))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "reference_graphs")
    ap.add_argument("--prune", action="store_true", help="delete *.json files no item produced")
    args = ap.parse_args(argv)

    ids = [it.id for it in ITEMS]
    dup = sorted(k for k, v in Counter(ids).items() if v > 1)
    if dup:
        raise SystemExit(f"duplicate item ids: {dup}")
    per_area = Counter(it.area for it in ITEMS)
    if any(per_area[a] != PER_AREA for a in AREAS) or set(per_area) != set(AREAS):
        raise SystemExit(f"want {PER_AREA} items per area, got {dict(per_area)}")

    args.out.mkdir(parents=True, exist_ok=True)
    graphs: list[DiagramGraph] = []
    errors: list[str] = []
    for it in ITEMS:
        try:
            graphs.append(build_graph(it))
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise SystemExit("invalid items, nothing written:\n" + "\n".join(errors))
    rows = []
    for it, graph in zip(ITEMS, graphs, strict=True):
        graph.save(args.out / f"{it.id}.json")
        f = complexity_features(graph)
        rows.append((it, graph, f, complexity_score(f), is_linear(graph)))

    stale = sorted(p for p in args.out.glob("*.json") if p.stem not in set(ids))
    for p in stale:
        if args.prune:
            p.unlink()
            print(f"removed stale {p}")
        else:
            print(f"warning: stale file not produced by any item: {p}", file=sys.stderr)

    print(f"{'id':32} {'area':28} {'N':>3} {'E':>3} {'br':>3} {'mg':>3} {'cyc':>3} "
          f"{'dep':>3} {'grp':>3} {'score':>6}  tier    linear")
    for it, graph, f, score, lin in sorted(rows, key=lambda r: r[3]):
        print(f"{it.id:32} {it.area:28} {f['n_nodes']:3} {f['n_edges']:3} {f['n_branching']:3} "
              f"{f['n_merging']:3} {f['n_cycles']:3} {f['depth']:3} {f['n_groups']:3} "
              f"{score:6.1f}  {graph.meta['difficulty']:7} {'yes' if lin else ''}")
    tiers = Counter(r[1].meta["difficulty"] for r in rows)
    n_nodes = [r[2]["n_nodes"] for r in rows]
    n_edges = [r[2]["n_edges"] for r in rows]
    nonlinear = sum(1 for r in rows if not r[4])
    print(f"\n{len(rows)} items written to {args.out}")
    print(f"tiers: easy {tiers['easy']}, medium {tiers['medium']}, hard {tiers['hard']}")
    print(f"nodes: min {min(n_nodes)}, median {statistics.median(n_nodes)}, max {max(n_nodes)}")
    print(f"edges: min {min(n_edges)}, median {statistics.median(n_edges)}, max {max(n_edges)}")
    print(f"non-linear: {nonlinear}/{len(rows)} ({100 * nonlinear / len(rows):.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
