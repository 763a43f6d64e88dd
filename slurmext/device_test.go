package slurmext

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDeviceMinor(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    int
		wantErr error
	}{
		{name: "regular file named like a GPU", path: touch("nvidia3"), want: 3},
		{name: "several trailing digits", path: touch("nvidia12"), want: 12},
		{name: "only the trailing digits count", path: touch("nvidia-cap21"), want: 21},
		{name: "no trailing digits", path: touch("nvidiactl"), want: -1, wantErr: ErrNoMinor},
		{name: "digits too large", path: touch("nvidia99999999999"), want: -1, wantErr: ErrNoMinor},
		{name: "missing file", path: filepath.Join(dir, "nvidia7"), want: -1, wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DeviceMinor(tt.path)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("DeviceMinor(%q) error = %v, want %v", tt.path, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("DeviceMinor(%q) = %d, want %d", tt.path, got, tt.want)
			}
		})
	}
}

// TestDeviceMinorCharDevice checks that a character device's own minor number
// wins over its name, as with fake GPUs made by `mknod PATH c 195 N`.
func TestDeviceMinorCharDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	tests := []struct {
		name  string
		file  string
		minor uint32
	}{
		{name: "name without digits", file: "gpu-dev", minor: 5},
		{name: "name digits disagree with minor", file: "nvidia9", minor: 3},
		{name: "large minor", file: "nvidia-uvm", minor: 1 << 19},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.file)
			if err := unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(195, tt.minor))); err != nil {
				t.Skipf("mknod not permitted here: %v", err)
			}
			got, err := DeviceMinor(p)
			if err != nil {
				t.Fatalf("DeviceMinor(%q) error = %v", p, err)
			}
			if got != int(tt.minor) {
				t.Errorf("DeviceMinor(%q) = %d, want %d", p, got, tt.minor)
			}
		})
	}
}

func TestMinorFromName(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		want    int
		wantErr bool
	}{
		{name: "device path", path: "/dev/nvidia3", want: 3},
		{name: "leading zeros", path: "/dev/nvidia007", want: 7},
		{name: "digits in directory ignored", path: "/dev/dri0/card", want: -1, wantErr: true},
		{name: "bare number", path: "12", want: 12},
		{name: "empty", path: "", want: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MinorFromName(tt.path)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrNoMinor)) {
				t.Fatalf("MinorFromName(%q) error = %v, want error %v", tt.path, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("MinorFromName(%q) = %d, want %d", tt.path, got, tt.want)
			}
		})
	}
}
