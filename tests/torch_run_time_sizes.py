"""A torch module whose sizes are computed from its inputs' shapes at run
time (tests/test_run_time_sizes.py): F.pad of an image to a multiple of 8,
nearest and bilinear F.interpolate(scale_factor=2) of it, a repeat by a
count read from a shape, and an audio frontend's constant_pad_nd of a
waveform to a multiple of its hop.

And two dims asked dynamic that the code fixes (torch.export specializes
them; x2 keeps them at their example size and says where): a table of 6
positions added to `patches` (a pooling transformer's sequence) and a
per-item loop over `anchors` (an object detector's postprocessing); and one
it bounds: `frames` pools its first 8 steps when it has more than 8."""
import torch
import torch.nn.functional as F

HOP = 16


class RunTimeSizes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.positions = torch.nn.Parameter(torch.randn(1, 6, 4))

    def forward(self, image, tokens, wave, patches, anchors, frames):
        height, width = image.shape[2], image.shape[3]
        padded = F.pad(self.conv(image), (0, (8 - width % 8) % 8, 0, (8 - height % 8) % 8))
        upsampled = (F.interpolate(padded, scale_factor=2, mode="nearest")
                     + F.interpolate(padded, scale_factor=2, mode="bilinear"))
        repeated = tokens.repeat(1, tokens.shape[1] // 4, 1)
        framed = F.pad(wave, (0, (HOP - wave.shape[-1] % HOP) % HOP), value=0.5)
        pooled = (patches + self.positions).mean(1)
        per_item = torch.stack([anchors[i] * (i + 1) for i in range(anchors.shape[0])])
        first = frames[:, :8].mean(1) if frames.shape[1] > 8 else frames.mean(1)
        return (upsampled, repeated, framed.reshape(framed.shape[0], -1, HOP), pooled, per_item,
                first)


def factory():
    torch.manual_seed(0)  # the same weights in every process that builds it
    return RunTimeSizes().eval()
