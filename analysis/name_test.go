package analysis

import "testing"

func TestNormaliseName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "train", want: "train"},
		{name: "case and separators", in: "Train-ResNet.seed", want: "train_resnet_seed"},
		{name: "digits inside words", in: "train_resnet50_seed3", want: "train_resnet_seed"},
		{name: "same task other seed", in: "train_resnet18_seed4", want: "train_resnet_seed"},
		{name: "array index", in: "sweep_17", want: "sweep"},
		{name: "slurm patterns", in: "sweep_%A_%a", want: "sweep"},
		{name: "pattern glued to a word", in: "run%j.sh", want: "run_sh"},
		{name: "percent that is no pattern", in: "100%done", want: "done"},
		{name: "iso date", in: "preprocess-2025-03-01", want: "preprocess"},
		{name: "compact date", in: "preprocess_20250301", want: "preprocess"},
		{name: "timestamp", in: "bert-finetune_20250301T120000", want: "bert_finetune"},
		{name: "time of day", in: "eval 12:30:05", want: "eval"},
		{name: "git hash", in: "eval_ckpt_3f9a2b1c", want: "eval_ckpt"},
		{name: "long hash", in: "build-9fceb02d0ae598e95dc970b74767f19372d61af8", want: "build"},
		{name: "hex word without digits kept", in: "decade_facade", want: "decade_facade"},
		{name: "short hex with digits is not a hash", in: "ab12cd", want: "abcd"}, // 6 chars, digits ≤ letters
		{name: "uuid", in: "run-550e8400-e29b-41d4-a716-446655440000", want: "run"},
		{name: "uuid upper case", in: "RUN_550E8400-E29B-41D4-A716-446655440000_x", want: "run_x"},
		{name: "uuid-like but too long", in: "550e8400-e29b-41d4-a716-4466554400001", want: "eb"}, // words: hash, "e29b", digits, digits, digits
		{name: "more digits than letters", in: "v100_a100", want: ""},
		{name: "model sizes merge", in: "gpt2-xl", want: "gpt_xl"},
		{name: "numbers only", in: "12345", want: ""},
		{name: "empty", in: "", want: ""},
		{name: "separators only", in: "--__..", want: ""},
		{name: "unicode letters", in: "Ñandú_Übung42", want: "ñandú_übung"},
		{name: "invalid utf-8", in: "a\xffb", want: "a_b"},
		{name: "shell", in: "bash", want: "bash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormaliseName(tt.in); got != tt.want {
				t.Errorf("NormaliseName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormaliseNameIdempotent(t *testing.T) {
	for _, in := range []string{"train_resnet50_seed3", "Ñandú_Übung42", "sweep_%a", "eval-3f9a2b1c", "x"} {
		once := NormaliseName(in)
		if twice := NormaliseName(once); twice != once {
			t.Errorf("NormaliseName(NormaliseName(%q)) = %q, want %q", in, twice, once)
		}
	}
}

func TestNormaliseNameNoCopyWhenNormal(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = NormaliseName("train_resnet_seed") })
	// One allocation for the working buffer; none for the result.
	if allocs > 1 {
		t.Errorf("allocations = %v, want ≤ 1", allocs)
	}
}
