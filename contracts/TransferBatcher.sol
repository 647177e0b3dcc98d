// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {FHE, euint64, externalEuint64} from "@fhevm/solidity/lib/FHE.sol";
import {ZamaEthereumConfig} from "@fhevm/solidity/config/ZamaConfig.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC7984} from "@openzeppelin/confidential-contracts/interfaces/IERC7984.sol";

/**
 * @title TransferBatcher
 * @notice Many confidential transfers in one transaction under one input proof. An input proof is bound to one
 *         (contract, caller) pair: each custodial wallet sending its own transfer needs a proof of its own (20-30 s
 *         of client CPU with real FHE). Here the amounts of every leg are encrypted together for (this contract,
 *         the owner), and each leg is the token's `confidentialTransferFrom(from, to, amount)`, with this contract
 *         an ERC-7984 operator of every `from` (each wallet grants it with `token.setOperator(batcher, until)`).
 *
 *         Only the owner (the service operator) may send a batch: an operator of the custodial wallets must not
 *         move their funds for anyone else. A leg whose sender is short moves an encrypted zero and the others go
 *         on (ERC-7984 transfers do not revert on balance); a leg whose sender did not grant this contract reverts
 *         the whole batch, which the service then retries leg by leg.
 *
 *         ACL: each leg's transferred handle is granted to the owner, so the service verifies every leg (silent
 *         zero) with one decryption request; the token grants it to the leg's sender and recipient as always.
 */
contract TransferBatcher is ZamaEthereumConfig, Ownable {
    IERC7984 public immutable token;

    /// @dev One per leg, in the order given: `amount` is the handle the token transferred (the token's own
    ///      `ConfidentialTransfer(from, to, amount)` carries the same handle).
    event BatchLeg(uint256 indexed leg, address indexed from, address indexed to, euint64 amount);

    error LengthMismatch();

    constructor(IERC7984 token_, address owner_) Ownable(owner_) {
        token = token_;
    }

    function batchTransfer(
        address[] calldata from,
        address[] calldata to,
        externalEuint64[] calldata amounts,
        bytes calldata inputProof
    ) external onlyOwner {
        uint256 legs = from.length;
        if (to.length != legs || amounts.length != legs) revert LengthMismatch();
        for (uint256 i = 0; i < legs; i++) {
            euint64 amount = FHE.fromExternal(amounts[i], inputProof);
            FHE.allowTransient(amount, address(token));
            euint64 transferred = token.confidentialTransferFrom(from[i], to[i], amount);
            FHE.allow(transferred, owner());
            emit BatchLeg(i, from[i], to[i], transferred);
        }
    }
}
