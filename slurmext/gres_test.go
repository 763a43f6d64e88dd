package slurmext

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseGresConf(t *testing.T) {
	dev := func(i int, typ, file string) GresDevice {
		return GresDevice{Index: i, Name: "gpu", Type: typ, File: file}
	}
	tests := []struct {
		name string
		conf string
		node string
		want []GresDevice
	}{
		{
			name: "test cluster from slurm-facts",
			conf: "NodeName=localhost Name=gpu File=/some/dir/nvidia[0-3]\nNodeName=localhost Name=shard Count=8\n",
			node: "localhost",
			want: []GresDevice{
				dev(0, "", "/some/dir/nvidia0"), dev(1, "", "/some/dir/nvidia1"),
				dev(2, "", "/some/dir/nvidia2"), dev(3, "", "/some/dir/nvidia3"),
			},
		},
		{
			name: "index follows file order across lines",
			conf: "Name=gpu Type=a100 File=/dev/nvidia[2-3]\nName=gpu Type=v100 File=/dev/nvidia[0-1]\n",
			want: []GresDevice{
				dev(0, "a100", "/dev/nvidia2"), dev(1, "a100", "/dev/nvidia3"),
				dev(2, "v100", "/dev/nvidia0"), dev(3, "v100", "/dev/nvidia1"),
			},
			node: "anything",
		},
		{
			name: "NodeName hostlist selects lines",
			conf: "NodeName=gpu[01-04] Name=gpu File=/dev/nvidia[0-7]\n" +
				"NodeName=gpu[05-08] Name=gpu Type=a100 File=/dev/nvidia[0-1]\n",
			node: "gpu06",
			want: []GresDevice{dev(0, "a100", "/dev/nvidia0"), dev(1, "a100", "/dev/nvidia1")},
		},
		{
			name: "node on no line",
			conf: "NodeName=gpu[01-04] Name=gpu File=/dev/nvidia[0-7]\n",
			node: "login1",
			want: nil,
		},
		{
			name: "unknown node name sees only global lines",
			conf: "NodeName=gpu01 Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n",
			node: "",
			want: []GresDevice{dev(0, "", "/dev/nvidia1")},
		},
		{
			name: "comma list of files",
			conf: "Name=gpu File=/dev/nvidia0,/dev/nvidia2",
			want: []GresDevice{dev(0, "", "/dev/nvidia0"), dev(1, "", "/dev/nvidia2")},
		},
		{
			name: "comments, blank lines, CRLF, case-insensitive keys",
			conf: "# header\r\n\r\n   \r\nNAME=gpu file=/dev/nvidia0 # trailing\r\n  # indented comment\r\n",
			want: []GresDevice{{Index: 0, Name: "gpu", File: "/dev/nvidia0"}},
		},
		{
			name: "GRES name compared without case",
			conf: "Name=GPU File=/dev/nvidia0",
			want: []GresDevice{{Index: 0, Name: "GPU", File: "/dev/nvidia0"}},
		},
		{
			name: "continuation lines",
			conf: "Name=gpu Type=h100 \\\n    File=/dev/nvidia[0-1] \\   \n  Cores=0-7\nName=gpu File=/dev/nvidia2\n",
			want: []GresDevice{dev(0, "h100", "/dev/nvidia0"), dev(1, "h100", "/dev/nvidia1"), dev(2, "", "/dev/nvidia2")},
		},
		{
			name: "continuation joins directly, as Slurm does",
			conf: "Name=gpu File=/dev/nvidia[0-\\\n1]\n",
			want: []GresDevice{dev(0, "", "/dev/nvidia0"), dev(1, "", "/dev/nvidia1")},
		},
		{
			name: "continuation on the last line",
			conf: "Name=gpu File=/dev/nvidia0 \\",
			want: []GresDevice{dev(0, "", "/dev/nvidia0")},
		},
		{
			name: "escaped hash is literal",
			conf: `Name=gpu File=/dev/gpu\#0 # comment`,
			want: []GresDevice{dev(0, "", "/dev/gpu#0")},
		},
		{
			name: "quoted value and spaces around equals",
			conf: `Name = gpu Type="h100" File = "/dev/nvidia0"`,
			want: []GresDevice{dev(0, "h100", "/dev/nvidia0")},
		},
		{
			name: "Count without File, other GRES and unknown keys ignored",
			conf: "Name=gpu Count=4\nName=shard Count=8 File=/dev/nvidia0\nName=mps Count=200\n" +
				"Name=gpu File=/dev/nvidia1 Cores=0-7 Links=-1,0 Flags=nvidia_gpu_env Frobnicate=yes\n",
			want: []GresDevice{dev(0, "", "/dev/nvidia1")},
		},
		{
			name: "MultipleFiles is one device",
			conf: "Name=gpu MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\nName=gpu File=/dev/nvidia1\n",
			want: []GresDevice{dev(0, "", "/dev/nvidia0"), dev(1, "", "/dev/nvidia1")},
		},
		{
			name: "empty File value gives nothing",
			conf: `Name=gpu File=""`,
			want: nil,
		},
		{name: "empty file", conf: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGresConf(strings.NewReader(tt.conf), tt.node)
			if err != nil {
				t.Fatalf("ParseGresConf error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseGresConf =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseGresConfErrors(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		wantErr error
		wantMsg string
	}{
		{name: "line without pairs", conf: "Name=gpu File=/dev/nvidia0\nbogus line\n",
			wantErr: ErrBadGresConf, wantMsg: "line 2"},
		{name: "line number counts continuations", conf: "Name=gpu \\\nFile=/dev/nvidia0\n\nfoo\n",
			wantErr: ErrBadGresConf, wantMsg: "line 4"},
		{name: "error reported at start of joined line", conf: "\nName=gpu \\\n junk\n",
			wantErr: ErrBadGresConf, wantMsg: "line 2"},
		{name: "Include", conf: "Include /etc/slurm/gres.d/a.conf\n",
			wantErr: ErrBadGresConf, wantMsg: "is not supported in a configuration read from a stream"},
		{name: "missing key", conf: "=gpu\n", wantErr: ErrBadGresConf, wantMsg: "line 1"},
		{name: "bad key character", conf: "Na-me=gpu\n", wantErr: ErrBadGresConf},
		{name: "unterminated quote", conf: `Name=gpu File="/dev/nvidia0`, wantErr: ErrBadGresConf},
		{name: "malformed NodeName", conf: "NodeName=gpu[01- Name=gpu File=/dev/nvidia0\n",
			wantErr: ErrBadHostlist},
		{name: "malformed NodeName is also a gres.conf error", conf: "NodeName=gpu[01- Name=gpu File=/dev/nvidia0\n",
			wantErr: ErrBadGresConf},
		{name: "reverse File range", conf: "Name=gpu File=/dev/nvidia[3-1]\n", wantErr: ErrBadGresConf},
		{name: "File and MultipleFiles", conf: "Name=gpu File=/dev/nvidia0 MultipleFiles=/dev/nvidia1\n",
			wantErr: ErrBadGresConf},
		{name: "same file twice", conf: "Name=gpu File=/dev/nvidia[0-1]\nName=gpu File=/dev/nvidia1\n",
			wantErr: ErrBadGresConf, wantMsg: "line 2"},
		{name: "too many devices on one line", conf: "Name=gpu File=/dev/n[0-4096]\n", wantErr: ErrTooLarge},
		{name: "too many devices over lines",
			conf:    strings.Repeat("Name=gpu File=/dev/a[0-999]\n", 1) + "Name=gpu File=/dev/b[0-3096]\n",
			wantErr: ErrTooLarge, wantMsg: "line 2"},
		{name: "over-long line", conf: "Name=gpu File=" + strings.Repeat("x", 2<<20), wantErr: ErrBadGresConf},
		{name: "over-long joined line",
			conf: strings.Repeat("Name=gpu"+strings.Repeat(" ", 1<<16)+"\\\n", 20), wantErr: ErrBadGresConf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGresConf(strings.NewReader(tt.conf), "gpu01")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseGresConf error = %v, want %v", err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("ParseGresConf returned %v with an error", got)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestReadGresConfFixture(t *testing.T) {
	tests := []struct {
		name           string
		node           string
		wantFiles      []string
		wantTypes      []string
		wantAutoDetect string
	}{
		{
			name:      "big node",
			node:      "gpu02",
			wantFiles: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3", "/dev/nvidia4", "/dev/nvidia5", "/dev/nvidia6", "/dev/nvidia7"},
			wantTypes: []string{"h100", "h100", "h100", "h100", "h100", "h100", "h100", "h100"},
		},
		{
			name:      "old node keeps gres.conf order, not device-number order",
			node:      "old1",
			wantFiles: []string{"/dev/nvidia2", "/dev/nvidia3", "/dev/nvidia0", "/dev/nvidia1"},
			wantTypes: []string{"v100", "v100", "p100", "p100"},
		},
		{name: "login node", node: "login1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open("testdata/gres.conf")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			conf, err := ReadGresConf(f, tt.node)
			if err != nil {
				t.Fatalf("ReadGresConf error = %v", err)
			}
			if conf.AutoDetect != "off" {
				t.Errorf("AutoDetect = %q, want %q", conf.AutoDetect, "off")
			}
			var files, types []string
			for i, d := range conf.Devices {
				if d.Index != i || d.Name != "gpu" {
					t.Errorf("device %d = %+v, want Index %d and Name gpu", i, d, i)
				}
				files = append(files, d.File)
				types = append(types, d.Type)
			}
			if !reflect.DeepEqual(files, tt.wantFiles) || !reflect.DeepEqual(types, tt.wantTypes) {
				t.Errorf("files %q types %q, want %q %q", files, types, tt.wantFiles, tt.wantTypes)
			}
		})
	}
}

func TestReadGresConfAutoDetect(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want string
	}{
		{name: "absent", conf: "Name=gpu File=/dev/nvidia0", want: ""},
		{name: "global", conf: "AutoDetect=nvml\nName=gpu Type=a100", want: "nvml"},
		{name: "per node, this node", conf: "NodeName=gpu01 AutoDetect=nvml\nNodeName=gpu02 AutoDetect=off", want: "nvml"},
		{name: "per node, other node only", conf: "NodeName=gpu02 AutoDetect=nvml", want: ""},
		{name: "last applicable wins", conf: "AutoDetect=nvml\nNodeName=gpu01 AutoDetect=off", want: "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := ReadGresConf(strings.NewReader(tt.conf), "gpu01")
			if err != nil {
				t.Fatalf("ReadGresConf error = %v", err)
			}
			if conf.AutoDetect != tt.want {
				t.Errorf("AutoDetect = %q, want %q", conf.AutoDetect, tt.want)
			}
		})
	}
}
