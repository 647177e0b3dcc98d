// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {FHE, euint32} from "@fhevm/solidity/lib/FHE.sol";
import {ZamaEthereumConfig} from "@fhevm/solidity/config/ZamaConfig.sol";
import {EncryptedCounter} from "./EncryptedCounter.sol";

/**
 * @title CountReveal
 * @notice Records the published total of an `EncryptedCounter` in clear, on the KMS's word only: `reveal` takes the
 *         cleartext and the public decryption proof the relayer returned, and `FHE.checkSignatures` reverts unless
 *         the KMS signers registered in the KMSVerifier (the one this contract's ZamaConfig names) signed exactly
 *         that cleartext for the counter's current handle.
 */
contract CountReveal is ZamaEthereumConfig {
    EncryptedCounter public immutable counter;
    uint32 public revealed;
    bool public isRevealed;

    event Revealed(euint32 count, uint32 value);

    constructor(EncryptedCounter counter_) {
        counter = counter_;
    }

    function reveal(bytes calldata abiEncodedCleartexts, bytes calldata decryptionProof) external {
        euint32 current = counter.count();
        bytes32[] memory handles = new bytes32[](1);
        handles[0] = FHE.toBytes32(current);
        FHE.checkSignatures(handles, abiEncodedCleartexts, decryptionProof);
        revealed = abi.decode(abiEncodedCleartexts, (uint32));
        isRevealed = true;
        emit Revealed(current, revealed);
    }
}
