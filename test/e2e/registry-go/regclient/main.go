// regclient drives a module registry the way Terraform's own client does
// (hashicorp/terraform internal/registry/client.go + internal/initwd/module_install.go):
//
//  1. service discovery over HTTPS with terraform-svchost/disco ("modules.v1");
//  2. GET <base><ns>/<name>/<provider>/versions with the registry token;
//  3. GET <base><ns>/<name>/<provider>/<version>/download -> 204 + X-Terraform-Get,
//     relative locations resolved against the download URL;
//  4. fetch and unpack the archive with hashicorp/go-getter (no registry token, as
//     Terraform does), then report the unpacked files.
//
// It prints one JSON object on stdout; any failure exits non-zero with the reason on
// stderr. Built in GOPATH mode from Debian's packages, offline.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	getter "github.com/hashicorp/go-getter"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/hashicorp/terraform-svchost/auth"
	"github.com/hashicorp/terraform-svchost/disco"
)

type versionsResponse struct {
	Modules []struct {
		Source   string `json:"source"`
		Versions []struct {
			Version string `json:"version"`
			Root    struct {
				Providers []struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"providers"`
			} `json:"root"`
		} `json:"versions"`
	} `json:"modules"`
}

type report struct {
	ServiceURL   string            `json:"service_url"`
	Versions     []string          `json:"versions"`
	DownloadURL  string            `json:"download_url"`
	DownloadCode int               `json:"download_status"`
	TerraformGet string            `json:"x_terraform_get"`
	ResolvedGet  string            `json:"resolved_get"`
	Files        map[string]string `json:"files"`
	UnauthStatus int               `json:"unauthenticated_versions_status"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "regclient: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	host := flag.String("host", "", "registry hostname, e.g. 127.0.0.1:8443")
	module := flag.String("module", "", "namespace/name/provider")
	version := flag.String("version", "", "version to install")
	token := flag.String("token", "", "registry token (sent as Terraform's credentials block would)")
	out := flag.String("out", "", "directory to unpack the module into")
	flag.Parse()
	if *host == "" || *module == "" || *version == "" || *out == "" {
		fail("usage: regclient -host H -module ns/name/provider -version V -out DIR [-token T]")
	}

	hostname, err := svchost.ForComparison(*host)
	if err != nil {
		fail("invalid host %q: %s", *host, err)
	}
	var creds auth.CredentialsSource
	if *token != "" {
		creds = auth.StaticCredentialsSource(map[svchost.Hostname]map[string]interface{}{
			hostname: {"token": *token},
		})
	}
	d := disco.NewWithCredentialsSource(creds)
	d.SetUserAgent("regclient/1.0 (terraform-compatible e2e)")
	base, err := d.DiscoverServiceURL(hostname, "modules.v1")
	if err != nil {
		fail("discovery: %s", err)
	}
	// client.go Discover: the base URL must end with a slash.
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	rep := report{ServiceURL: base.String(), Files: map[string]string{}}

	httpClient := &http.Client{Timeout: 10 * time.Second}
	doGet := func(u *url.URL, withToken bool) (*http.Response, error) {
		req, err := http.NewRequest("GET", u.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-Terraform-Version", "1.5.7")
		if withToken && *token != "" {
			req.Header.Set("Authorization", "Bearer "+*token)
		}
		return httpClient.Do(req)
	}

	// client.go ModuleVersions
	vurl, err := url.Parse(path.Join(*module, "versions"))
	if err != nil {
		fail("%s", err)
	}
	vurl = base.ResolveReference(vurl)
	resp, err := doGet(vurl, true)
	if err != nil {
		fail("versions: %s", err)
	}
	body, _ := ioutil.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		fail("versions: status %d: %s", resp.StatusCode, body)
	}
	var vr versionsResponse
	if err := json.Unmarshal(body, &vr); err != nil {
		fail("versions: invalid JSON: %s", err)
	}
	if len(vr.Modules) == 0 {
		fail("versions: Invalid response from remote module registry (no modules)")
	}
	found := false
	for _, v := range vr.Modules[0].Versions {
		rep.Versions = append(rep.Versions, v.Version)
		if v.Version == *version {
			found = true
		}
	}
	if !found {
		fail("versions: %s not offered (have %v)", *version, rep.Versions)
	}

	// Without the token: the server decides (public or token-required reads).
	if resp2, err := doGet(vurl, false); err == nil {
		rep.UnauthStatus = resp2.StatusCode
		resp2.Body.Close()
	}

	// client.go ModuleLocation
	durl, err := url.Parse(path.Join(*module, *version, "download"))
	if err != nil {
		fail("%s", err)
	}
	durl = base.ResolveReference(durl)
	rep.DownloadURL = durl.String()
	resp, err = doGet(durl, true)
	if err != nil {
		fail("download: %s", err)
	}
	dbody, _ := ioutil.ReadAll(resp.Body)
	resp.Body.Close()
	rep.DownloadCode = resp.StatusCode
	if resp.StatusCode != 200 && resp.StatusCode != 204 {
		fail("download: status %d: %s", resp.StatusCode, dbody)
	}
	location := resp.Header.Get("X-Terraform-Get")
	if location == "" {
		fail("download: failed to get download URL (no X-Terraform-Get)")
	}
	rep.TerraformGet = location
	if strings.HasPrefix(location, "/") || strings.HasPrefix(location, "./") || strings.HasPrefix(location, "../") {
		rel, err := url.Parse(location)
		if err != nil {
			fail("download: invalid relative location %q: %s", location, err)
		}
		location = durl.ResolveReference(rel).String()
	}
	rep.ResolvedGet = location

	// go-getter, as Terraform's getmodules package uses it: no registry token.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := &getter.Client{
		Ctx:  ctx,
		Src:  location,
		Dst:  *out,
		Pwd:  *out,
		Mode: getter.ClientModeDir,
		Getters: map[string]getter.Getter{
			"https": &getter.HttpGetter{Netrc: false},
			"http":  &getter.HttpGetter{Netrc: false},
		},
	}
	if err := client.Get(); err != nil {
		fail("go-getter: %s", err)
	}

	err = filepath.Walk(*out, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		data, err := ioutil.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(*out, p)
		sum := sha256.Sum256(data)
		rep.Files[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		fail("walk: %s", err)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		fail("%s", err)
	}
}
