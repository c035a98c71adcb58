import json
MiB=1048576; GiB=1073741824
NV=536870912; AMD=805306368; CW=33554432
CUDA="NVIDIA CUDA GPUs list (https://developer.nvidia.com/cuda-gpus)"
FS="found by exact-string search (find_string) over public GitHub files; the index returns no repository/path for these hits, so no URL can be cited [weaker than a linked source]"
def e(id,name,arch,mib=None,byts=None,family="",bf16=True,fp8=False,src="",asrc=CUDA,zh="",nzh="",vendor="NVIDIA",cw=False):
    d={"id":id,"name":name,"vendor":vendor,"arch":arch,
       "memory_bytes": byts if byts is not None else mib*MiB,
       "context_bytes": AMD if vendor=="AMD" else NV,
       "source":src,"family":family,"bf16":bf16,"fp8":fp8,
       "name_zh":zh,"note_zh":nzh,"arch_source":asrc}
    if cw: d["cublas_workspace_bytes"]=CW
    return d
G=[
# ---- Turing
e("rtx-2080-ti","NVIDIA GeForce RTX 2080 Ti","sm_75",11264,family="GeForce RTX 20",bf16=False,
  src="nvidia-smi memory.total 11264 MiB, driver 560.35.02 (WSL, Windows driver 560.94) in one pasted nvidia-smi table, and memory.total 11264 in one recorded gpustat JSON (gpustat reads NVML memory.total); both "+FS+". Older drivers report less for Turing cards (see notes.md)",
  asrc=CUDA+"; Turing TU102, compute capability 7.5",
  nzh="国内常见魔改 22GB 显存版本，其显存与本条目（11GB）不同"),
e("titan-rtx","NVIDIA TITAN RTX","sm_75",24576,family="GeForce RTX 20",bf16=False,
  src="nvidia-smi memory.total 24576 MiB, driver 535.54.03 (8x TITAN RTX table) and in 4 more public nvidia-smi tables, "+FS+"; an older-driver figure of 24,219 MiB is tabulated in https://github.com/lambdal/lambda-tensorflow-benchmark/pull/11 (\"NVidia-SMI\" column)",
  asrc=CUDA+"; Turing TU102, compute capability 7.5"),
e("quadro-rtx-8000","Quadro RTX 8000","sm_75",49152,family="Workstation",bf16=False,
  src="nvidia-smi memory.total 49152 MiB with ECC off in 2 public nvidia-smi tables (46080 MiB with ECC on in a third), "+FS+"; an older-driver figure of 48,601 MiB is tabulated in https://github.com/lambdal/lambda-tensorflow-benchmark/pull/11 (\"NVidia-SMI\" column). nvidia-smi prints the name without the NVIDIA prefix",
  asrc=CUDA+" (lists Quadro RTX 8000 under 7.5)"),
# ---- Hopper / Blackwell
e("h100-pcie","NVIDIA H100 PCIe","sm_90",81559,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi memory.total 81559 MiB (350 W board) in 5 public nvidia-smi tables, "+FS+"; same figure as the H100 SXM (h100-80gb)",
  asrc=CUDA+" (H100: 9.0)"),
e("h800","NVIDIA H800","sm_90",81559,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi memory.total 81559 MiB, driver 550.144.03 (8x H800 SXM, 700 W, in a pasted setup post) and in 2 more public nvidia-smi tables, "+FS+". The H800 PCIe (nvidia-smi name \"NVIDIA H800 PCIe\") was not found",
  asrc="compute capability 9.0 as printed for NVIDIA H800 by sglang's environment check: https://github.com/sgl-project/sglang/issues/2889",
  zh="英伟达 H800",nzh="中国特供版 H100（SXM），显存 80GB HBM3 与 H100 SXM 相同，NVLink 带宽降至 400GB/s，FP64 算力大幅削减"),
e("h20","NVIDIA H20","sm_90",97871,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi memory.total 97871 MiB (500 W board) in 5 public nvidia-smi tables (4 distinct outputs), "+FS+"; same figure as GH200 96GB",
  asrc=CUDA+"; Hopper GH100 die like H100, compute capability 9.0",
  zh="英伟达 H20",nzh="中国特供版 Hopper，96GB HBM3，算力大幅削减（FP16 稠密约 148 TFLOPS），显存带宽 4.0TB/s"),
e("h20-141gb","NVIDIA H20-3e","sm_90",143771,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi memory.total 143771 MiB, driver 550.144.03: https://github.com/sgl-project/sglang/issues/6418 (an 8x H20-3e nvidia-smi table in a comment); same figure as H200",
  asrc=CUDA+"; Hopper, compute capability 9.0",
  zh="英伟达 H20-3e",nzh="H20 的 141GB HBM3e 版本（nvidia-smi 显示为 H20-3e），中国特供版"),
e("gh200-96gb","NVIDIA GH200 480GB","sm_90",97871,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi memory.total 97871 MiB, driver 550.127.05: https://github.com/thamada/gls/blob/b2f1cedeb098383fb647ea9bc7b51e3fec596989/gls/GH200_smi.py (a recorded nvidia-smi and nvidia-smi -a output kept in a replay tool; 96 GB HBM3 GPU of the GH200 480GB superchip)",
  asrc="nvidia-smi -a \"Product Architecture: Hopper\" in the same file; "+CUDA),
e("gh200-144gb","NVIDIA GH200 144G HBM3e","sm_90",146831,family="Data center: Hopper",fp8=True,cw=True,
  src="nvidia-smi --query-gpu memory.total 146831 MiB, driver 580.173.02, in one published reference output (2x GH200 144G HBM3e host), "+FS,
  asrc="compute_cap 9.0 printed in the same nvidia-smi query output; "+CUDA),
e("b100","NVIDIA B100","sm_100",183359,family="Data center: Blackwell",fp8=True,cw=True,
  src="vendor datasheet: 192 GB HBM3e per GPU (HGX B100, same memory configuration as B200); no published nvidia-smi output found; memory.total assumed equal to the B200's 183359 MiB (b200 entry)",
  asrc=CUDA+"; Blackwell data-center GB100 like B200 (10.0)"),
e("gb200","NVIDIA GB200","sm_100",189471,family="Data center: Blackwell",fp8=True,cw=True,
  src="nvidia-smi memory.total 189471 MiB per Blackwell GPU (1200 W) in 4 public nvidia-smi tables, "+FS+" (two further hits with the same figure came from a stub NVML and are not counted)",
  asrc=CUDA+" (lists GB200 under 10.0)"),
e("rtx-pro-6000","NVIDIA RTX PRO 6000 Blackwell Workstation Edition","sm_120",97887,family="Workstation",fp8=True,cw=True,
  src="nvidia-smi memory.total 97887 MiB (600 W, fan, ECC off) in 2 public nvidia-smi tables, "+FS+"; the 300 W Max-Q board shows the same 97887 MiB in 2 more. Full name as printed by nvidia-smi: https://github.com/akash-network/provider-configs/issues/70",
  asrc=CUDA+"; GB202 like the RTX 5090 (12.0)"),
e("rtx-pro-6000-server","NVIDIA RTX PRO 6000 Blackwell Server Edition","sm_120",97887,family="Data center: Blackwell",fp8=True,cw=True,
  src="nvidia-smi memory.total 97887 MiB, driver 580.178.04 (a probe log that also prints the device name \"NVIDIA RTX PRO 6000 Blackwell Server Edition\"), and in 4 more passively cooled (fan N/A, ECC on) nvidia-smi tables, "+FS+"; same figure as the workstation card even with ECC on. Card named in https://github.com/bigstack-oss/cubecos/issues/312",
  asrc=CUDA+"; GB202 (12.0)"),
e("rtx-5080","NVIDIA GeForce RTX 5080","sm_120",16303,family="GeForce RTX 50",fp8=True,cw=True,
  src="nvidia-smi memory.total 16303 MiB in 7 public nvidia-smi tables, "+FS,
  asrc="compute capability (12, 0) printed by PyTorch for the card in a public diagnostic log; "+CUDA),
e("rtx-5070-ti","NVIDIA GeForce RTX 5070 Ti","sm_120",16303,family="GeForce RTX 50",fp8=True,cw=True,
  src="nvidia-smi memory.total 16303 MiB in 4 public nvidia-smi tables (and 16303 MB in a device listing), "+FS,
  asrc=CUDA+"; GB203 like the RTX 5080 (12.0)"),
# ---- Ampere / Ada
e("a100-pcie-40gb","NVIDIA A100-PCIE-40GB","sm_80",40960,family="Data center: Ampere",
  src="nvidia-smi memory.total 40960 MiB (250 W) in 7 public nvidia-smi tables (6 distinct outputs), "+FS+"; one old-driver table (name printed without the NVIDIA prefix) shows 40537 MiB",
  asrc=CUDA+" (A100: 8.0)"),
e("a100-pcie-80gb","NVIDIA A100 80GB PCIe","sm_80",81920,family="Data center: Ampere",
  src="nvidia-smi --query-gpu memory.total 81920 MiB, driver 580.159.04, recorded in a public test fixture, "+FS+"; the same board sold as A800 80GB PCIe reports 81920 MiB: https://github.com/vllm-project/vllm/issues/41519",
  asrc=CUDA+" (A100: 8.0)"),
e("a800-40gb","NVIDIA A800 40GB PCIe","sm_80",40960,family="Data center: Ampere",
  src="vendor datasheet: 40 GB HBM2 (GA100, same board as A100 PCIe 40GB); no published nvidia-smi output found; memory.total assumed 40960 MiB as on the A100-PCIE-40GB. The exact nvidia-smi name is unconfirmed; NVIDIA also sells a workstation \"NVIDIA A800 40GB Active\"",
  asrc=CUDA+"; GA100 like A100 (8.0)",
  zh="英伟达 A800 40GB",nzh="中国特供版，显存与 A100 40GB 相同，NVLink 带宽降低；另有全球发售的 A800 40GB Active 工作站卡"),
e("a800-80gb","NVIDIA A800-SXM4-80GB","sm_80",81920,family="Data center: Ampere",
  src="nvidia-smi memory.total 81920 MiB, driver 535.86.10: https://github.com/dexmal/dexbotic/issues/41 (an 8x A800-SXM4-80GB nvidia-smi table)",
  asrc=CUDA+"; GA100 like A100 (8.0)",
  zh="英伟达 A800",nzh="中国特供版，显存与 A100 80GB 相同，NVLink 带宽降低（400GB/s）"),
e("a800-pcie-80gb","NVIDIA A800 80GB PCIe","sm_80",81920,family="Data center: Ampere",
  src="nvidia-smi memory.total 81920 MiB, driver 550.54.15: https://github.com/vllm-project/vllm/issues/41519 (nvidia-smi table in a comment); also driver 580.119.02: https://github.com/Project-HAMi/HAMi/issues/1903",
  asrc=CUDA+"; GA100 like A100 (8.0)",
  zh="英伟达 A800 PCIe",nzh="中国特供版 PCIe 卡，显存与 A100 80GB PCIe 相同，NVLink 带宽降低"),
e("a30","NVIDIA A30","sm_80",24576,family="Data center: Ampere",
  src="nvidia-smi memory.total 24576 MiB (165 W) in 4 public nvidia-smi tables (MIG on and off), "+FS,
  asrc=CUDA+" (lists A30 under 8.0)"),
e("a10g","NVIDIA A10G","sm_86",23028,family="Data center: Ampere",
  src="nvidia-smi memory.total 23028 MiB, driver 535.247.01: https://github.com/NVIDIA/DCGM/issues/232 (nvidia-smi table in a comment; AWS G5 instance); same figure as the A10",
  asrc=CUDA+"; GA102 like A10 (8.6); https://github.com/vantage-sh/ec2instances.info/issues/724 (\"g5.12xlarge's nvidia a10g is 8.6\")"),
e("l20","NVIDIA L20","sm_89",46068,family="Data center: Ada",fp8=True,
  src="nvidia-smi memory.total 46068 MiB (ECC on, 350 W) in 5 public nvidia-smi tables, "+FS+"; one ECC-off table shows 49140 MiB",
  asrc=CUDA+"; AD102 like L40/L40S (8.9)",
  zh="英伟达 L20",nzh="中国特供版 Ada 数据中心卡，48GB GDDR6，算力低于 L40/L40S"),
e("l40","NVIDIA L40","sm_89",46068,family="Data center: Ada",fp8=True,
  src="nvidia-smi memory.total 46068 MiB (ECC on, 300 W) in 2 public nvidia-smi tables and a documented 46,068 MiB total, "+FS+"; same figure as the L40S",
  asrc=CUDA+" (L40: 8.9)"),
e("rtx-4090-d","NVIDIA GeForce RTX 4090 D","sm_89",24564,family="GeForce RTX 40",fp8=True,
  src="24564 MB total in one public device listing (NVML-based tool), "+FS+"; no nvidia-smi table found; assumed equal to the RTX 4090's 24564 MiB (same 24 GB GDDR6X board)",
  asrc=CUDA+"; AD102 like the RTX 4090 (8.9)",
  zh="英伟达 GeForce RTX 4090 D",nzh="中国特供版 RTX 4090，CUDA 核心减少（14592 个），显存 24GB 与 4090 相同；国内另有魔改 48GB 版本"),
e("rtx-4000-ada","NVIDIA RTX 4000 Ada Generation","sm_89",20475,family="Workstation",fp8=True,
  src="nvidia-smi memory.total 20475 MiB, driver 550.90.07: https://github.com/thamada/nvidia-smi/blob/b09ef139265ffc7e3c78006346981de8e4d70499/gls/RTX4000Ada_smi.py (a recorded nvidia-smi and nvidia-smi -a output kept in a replay tool; ECC disabled)",
  asrc="nvidia-smi -a \"Product Architecture: Ada Lovelace\" in the same file; "+CUDA),
e("rtx-5000-ada","NVIDIA RTX 5000 Ada Generation","sm_89",32760,family="Workstation",fp8=True,
  src="nvidia-smi memory.total 32760 MiB, driver 570.195.03, and in 4 more public nvidia-smi tables (ECC off; those 4 look like one machine), "+FS,
  asrc=CUDA+"; AD102 (8.9)"),
# ---- AMD
e("mi210","AMD Instinct MI210","gfx90a",byts=64*GiB,family="AMD Instinct",fp8=False,vendor="AMD",
  src="vendor datasheet: 64 GB HBM2e (one CDNA2 GCD, like one MI250X GCD); no published rocm-smi output found; memory_bytes = 64 GiB as for the mi250x entry. HIP reports 68702699520 B for a 64 GiB CDNA2 GCD (see notes.md)",
  asrc="CDNA2 gfx90a (a public table lists \"MI210 / MI250 / MI250X | CDNA 2 | gfx90a\"); ROCm GPU specifications: https://rocm.docs.amd.com/en/latest/_sources/reference/gpu-specs.rst"),
e("mi325x","AMD Instinct MI325X","gfx942",byts=256*GiB,family="AMD Instinct",fp8=True,vendor="AMD",
  src="256 GiB HBM3E: https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html (ROCm GPU specifications, VRAM (GiB) column); no published rocm-smi output found",
  asrc="CDNA3, LLVM target gfx942: https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html"),
]
existing=json.load(open("/work/main/resources/gpus.json"))
ids={g["id"] for g in existing["gpus"]}
new_ids=[g["id"] for g in G]
assert not (ids & set(new_ids)), ids & set(new_ids)
assert len(new_ids)==len(set(new_ids))
json.dump(G,open("/tmp/research/gpus/new_gpus.json","w"),ensure_ascii=False,indent=2)

fam={"rtx-3050":"GeForce RTX 30","rtx-3060":"GeForce RTX 30","rtx-3070":"GeForce RTX 30","rtx-3080":"GeForce RTX 30","rtx-3090":"GeForce RTX 30",
 "rtx-4060":"GeForce RTX 40","rtx-4060-ti-16gb":"GeForce RTX 40","rtx-4070":"GeForce RTX 40","rtx-4080":"GeForce RTX 40","rtx-4080-super":"GeForce RTX 40","rtx-4090":"GeForce RTX 40",
 "rtx-5090":"GeForce RTX 50","rtx-a4000":"Workstation","rtx-a5000":"Workstation","rtx-a6000":"Workstation","rtx-6000-ada":"Workstation",
 "t4":"Data center: Volta/Turing","v100-16gb":"Data center: Volta/Turing","v100-32gb":"Data center: Volta/Turing",
 "a10":"Data center: Ampere","a40":"Data center: Ampere","a100-40gb":"Data center: Ampere","a100-80gb":"Data center: Ampere",
 "l4":"Data center: Ada","l40s":"Data center: Ada","h100-80gb":"Data center: Hopper","h100-nvl":"Data center: Hopper","h200":"Data center: Hopper",
 "b200":"Data center: Blackwell","mi250x":"AMD Instinct","mi300x":"AMD Instinct"}
nzh={"rtx-4090":"中国市场另有特供版 RTX 4090 D（见 rtx-4090-d）及魔改 48GB 版本",
 "a100-40gb":"中国市场对应特供版为 A800 40GB","a100-80gb":"中国市场对应特供版为 A800 80GB（NVLink 带宽降低）",
 "h100-80gb":"中国市场对应特供版为 H800（NVLink 带宽降低）","h200":"中国市场的 141GB Hopper 特供版为 H20-3e（算力大幅削减）",
 "l40s":"中国市场对应特供版为 L20"}
fp8arch={"sm_89","sm_90","sm_100","sm_120","gfx942"}
def bf(a): 
    if a.startswith("gfx"): return a in ("gfx90a","gfx942","gfx950")
    return int(a[3:])>=80
X={}
for g in existing["gpus"]:
    assert g["id"] in fam, g["id"]
    X[g["id"]]={"family":fam[g["id"]],"bf16":bf(g["arch"]),"fp8":g["arch"] in fp8arch,"name_zh":"","note_zh":nzh.get(g["id"],"")}
json.dump(X,open("/tmp/research/gpus/existing_extra.json","w"),ensure_ascii=False,indent=2)
for g in G: print(g["id"],g["arch"],g["memory_bytes"],g["memory_bytes"]//MiB,"MiB","cw" if "cublas_workspace_bytes" in g else "")
