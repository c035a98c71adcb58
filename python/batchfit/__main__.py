"""python -m batchfit: batchfit-cli, in process (the same commands, options, output and exit codes), e.g.

    python -m batchfit check-fit --hf-config meta-llama/Llama-3.1-8B --seq 4096 --gpu a100-80gb --batch 4 \\
        --precision amp-bf16 --checkpointing every-block || exit 1
"""
import sys

from .api import run_cli


def main(argv=None):
    rc, out, err = run_cli(sys.argv[1:] if argv is None else argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return rc


if __name__ == "__main__":
    sys.exit(main())
