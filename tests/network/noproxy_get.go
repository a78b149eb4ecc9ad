// A Go client that ignores proxy settings (Proxy: nil) and resolves names
// itself (Go's own resolver reads /etc/resolv.conf): the kind of program that
// has no network in a sealed run without the run's DNS and capture.
//   noproxy_get URL
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Get(os.Args[1])
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s", resp.StatusCode, body)
}
